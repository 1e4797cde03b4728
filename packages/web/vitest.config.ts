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
  },
});
