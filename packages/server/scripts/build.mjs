// Builds the server for `pnpm start`: dist/main.mjs, with the packages left to node_modules.
// What main.ts imports lazily (the dashboard's GraphQL schema) is split into chunks of its own,
// so its packages load only when it is first used; every file sits in dist/ itself, where
// new URL('./…', import.meta.url) finds its neighbours. Running it needs no TypeScript loader in the process (tsx cost ~35 MB of memory
// and a slower start). The database thread's entry is plain JavaScript and is copied beside it.
import { copyFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');
rmSync(path.join(root, 'dist'), { recursive: true, force: true });
await build({
  entryPoints: [path.join(root, 'src/main.ts')],
  outdir: path.join(root, 'dist'),
  outExtension: { '.js': '.mjs' },
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  packages: 'external',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
});
copyFileSync(path.join(root, 'src/db/pglite-worker.mjs'), path.join(root, 'dist/pglite-worker.mjs'));
