import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // graphql 16 has no "exports": Node (and so graphql-yoga, loaded by Node) gets its CommonJS
    // build, while Vite would hand our sources its "module" build. Two copies of GraphQLError make
    // yoga mask every GraphQLError our resolvers throw; one copy, as in production, does not.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/pgliteSnapshot.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
