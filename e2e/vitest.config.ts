import { defineConfig } from 'vitest/config';

/** Browser and SDK tests against the real server, started as its own process per test file. */
export default defineConfig({
  test: {
    name: 'e2e',
    root: import.meta.dirname,
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', 'artifacts/**'],
    // Each file starts a server and a browser: run them one after another on these 2-core machines.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
