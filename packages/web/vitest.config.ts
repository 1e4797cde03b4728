import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'web',
    root: import.meta.dirname,
    include: ['src/**/*.test.{ts,tsx}'],
    // Component tests render into a DOM; the plain rule tests do not mind having one.
    environment: 'happy-dom',
    setupFiles: ['./vitest.setup.ts'],
    passWithNoTests: true,
    // Above Testing Library's waits (10 s, vitest.setup.ts), so a slow machine shows as a slow
    // test, never as a failed one.
    testTimeout: 30_000,
  },
});
