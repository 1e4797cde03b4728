// Builds the server for `pnpm start`: dist/main.mjs, with the packages left to node_modules
// (the workspace's @gatehouse/rules is bundled in).
// What main.ts imports lazily (the dashboard's GraphQL schema) is split into chunks of its own,
// so its packages load only when it is first used; every file sits in dist/ itself, where
// new URL('./…', import.meta.url) finds its neighbours. Running it needs no TypeScript loader in the process (tsx cost ~35 MB of memory
// and a slower start). The database thread's entry is plain JavaScript and is copied beside it.
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');
const dist = path.join(root, 'dist');
// What the previous build wrote. dist/ is not emptied first: a server running from it loads its
// GraphQL chunk on first use, by name, and a rebuild beside it (a benchmark while e2e runs, say)
// must not take that file away. Files of the builds before the previous one are removed.
const manifest = path.join(dist, '.build-outputs.json');
const previous = new Set(existsSync(manifest) ? JSON.parse(readFileSync(manifest, 'utf8')) : []);
const result = await build({
  entryPoints: [path.join(root, 'src/main.ts')],
  outdir: dist,
  outExtension: { '.js': '.mjs' },
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  // Packages stay in node_modules, except the workspace's own, which ship as TypeScript source.
  plugins: [
    {
      name: 'external-packages',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) =>
          args.path.startsWith('@gatehouse/') ? undefined : { path: args.path, external: true },
        );
      },
    },
  ],
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  metafile: true,
  logLevel: 'warning',
});
copyFileSync(path.join(root, 'src/db/pglite-worker.mjs'), path.join(dist, 'pglite-worker.mjs'));
const outputs = [
  ...Object.keys(result.metafile.outputs).map((file) => path.basename(file)),
  'pglite-worker.mjs',
];
for (const file of readdirSync(dist)) {
  if (file !== path.basename(manifest) && !outputs.includes(file) && !previous.has(file)) {
    rmSync(path.join(dist, file), { recursive: true, force: true });
  }
}
writeFileSync(manifest, JSON.stringify(outputs));
