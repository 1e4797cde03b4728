import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Example, jsonValues, type Page, parsePage, shapeMismatches } from './support/docExamples.ts';
import { startServer } from './support/server.ts';

/**
 * Every request example of README.md and docs/*.md, run as a reader runs it: each page top to bottom
 * against a freshly started Gatehouse (the built dist/main.mjs, a new data directory, the mock
 * provider), its shell blocks in one bash session (`bash -euo pipefail`, so a variable set by one
 * block is there for the next), its SDK snippets with node, and each documented answer's shape held
 * against the real one. The pages' convention is in support/docExamples.ts.
 *
 * The examples name the gateway as a reader's `npx pnpm start` serves it, http://127.0.0.1:3000;
 * that origin is replaced by the test server's. curl runs with --fail-with-body, so an example
 * answered with an error status fails here even where the page prints no answer.
 */

const repoRoot = path.resolve(import.meta.dirname, '..');
const READER_ORIGIN = 'http://127.0.0.1:3000';

const pages: Page[] = [
  'README.md',
  ...readdirSync(path.join(repoRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
].map((page) => parsePage(page, readFileSync(path.join(repoRoot, page), 'utf8')));

const runs = (e: Example) => e.kind === 'shell' || e.kind === 'node';
const where = (e: Example) => `${e.page}:${e.line}`;
const ran = new Set<string>();

afterAll(() => {
  const lines = pages.map((page) => {
    const count = (kind: Example['kind']) => page.examples.filter((e) => e.kind === kind).length;
    const skipped = page.examples.filter((e) => e.kind === 'skipped');
    const run = count('shell') + count('node');
    const state = run > 0 && !ran.has(page.page) ? ' [not run in this session]' : '';
    const why = skipped.map((e) => `line ${e.line}: ${e.reason}`).join('; ');
    return `  ${page.page}: ${run} run, ${count('answer')} answers checked, ${skipped.length} skipped${why ? ` (${why})` : ''}${state}`;
  });
  const all = pages.flatMap((p) => p.examples);
  console.log(
    [
      'Documentation examples:',
      ...lines,
      `  in all: ${all.filter(runs).length} run, ${all.filter((e) => e.kind === 'answer').length} answers checked, ` +
        `${all.filter((e) => e.kind === 'skipped').length} skipped`,
    ].join('\n'),
  );
});

describe('the documentation examples', () => {
  it('marks every fenced block that is not a request, and shows each answer after its request', () => {
    const problems = pages.flatMap((p) =>
      p.examples.flatMap((e) => {
        if (e.kind === 'unmarked') {
          return [
            `${where(e)}: a \`\`\`${e.lang || '(no language)'} block neither run nor marked <!-- not-run: … -->`,
          ];
        }
        if (e.kind === 'answer' && e.answers === undefined) {
          return [`${where(e)}: a \`\`\`json answer that follows no request block`];
        }
        return [];
      }),
    );
    expect(problems).toEqual([]);
  });

  it('finds the tools the examples use', async () => {
    for (const tool of ['bash', 'curl', 'jq']) {
      const { code } = await run('bash', ['-c', `command -v ${tool}`], os.tmpdir());
      expect(code, `${tool} is not installed (Debian: apt-get install ${tool})`).toBe(0);
    }
  });

  for (const page of pages.filter((p) => p.examples.some(runs))) {
    it(`${page.page}: every example works as written`, { timeout: 300_000 }, async () => {
      ran.add(page.page);
      await runPage(page);
    });
  }
});

async function runPage(page: Page): Promise<void> {
  const server = await startServer(page.serverEnv);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-docs-'));
  try {
    // The reader's working directory: the repository's root (sample files are named from there),
    // with the e2e package's SDKs resolvable for the snippets; files the examples write stay here.
    await symlink(path.join(repoRoot, 'docs'), path.join(dir, 'docs'));
    await symlink(path.join(repoRoot, 'e2e/node_modules'), path.join(dir, 'node_modules'));
    await writeFile(path.join(dir, 'package.json'), '{"type":"module"}\n');
    await mkdir(path.join(dir, '.examples'));

    const script = ['curl() { command curl --fail-with-body --show-error "$@"; }'];
    for (const [index, example] of page.examples.entries()) {
      if (!runs(example)) continue;
      const code = example.code.replaceAll(READER_ORIGIN, server.url);
      const out = `.examples/${index}`;
      let command = code;
      if (example.kind === 'node') {
        const file = `${out}.${example.lang.startsWith('t') ? 'ts' : 'mjs'}`;
        await writeFile(path.join(dir, file), code);
        command = `node ${file}`;
      }
      script.push(`echo ${index} > .examples/progress`, '{', command, `} > ${out}.out 2> ${out}.err`);
    }
    await writeFile(path.join(dir, 'examples.sh'), `${script.join('\n')}\n`);

    const { code, output } = await run('bash', ['-euo', 'pipefail', 'examples.sh'], dir);
    if (code !== 0) {
      const index = Number(await readFile(path.join(dir, '.examples/progress'), 'utf8').catch(() => '-1'));
      const failed = page.examples[index];
      const read = (ext: string) =>
        readFile(path.join(dir, `.examples/${index}.${ext}`), 'utf8').catch(() => '');
      throw new Error(
        `${failed ? where(failed) : page.page}: the example failed (exit ${code})\n` +
          `--- example\n${failed?.code}\n--- stdout\n${(await read('out')).slice(0, 4000)}\n` +
          `--- stderr\n${(await read('err')).slice(0, 4000)}${output}\n--- server\n${server.output().slice(-4000)}`,
      );
    }

    const mismatches: string[] = [];
    for (const answer of page.examples.filter((e) => e.kind === 'answer')) {
      if (answer.answers === undefined) continue; // reported by the marking test
      const request = page.examples[answer.answers] as Example;
      let documented: unknown;
      try {
        documented = JSON.parse(answer.code);
      } catch (error) {
        mismatches.push(`${where(answer)}: the documented answer is not JSON: ${(error as Error).message}`);
        continue;
      }
      const printed = await readFile(path.join(dir, `.examples/${answer.answers}.out`), 'utf8');
      const real = jsonValues(printed).at(-1);
      if (real === undefined) {
        mismatches.push(`${where(answer)}: the request at ${where(request)} printed no JSON:\n${printed}`);
        continue;
      }
      for (const m of shapeMismatches(documented, real)) mismatches.push(`${where(answer)}: ${m}`);
    }
    expect(mismatches).toEqual([]);
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** A command's exit code and stderr; stdout goes to the examples' own files. */
function run(command: string, args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      // Only what a reader's shell has: no KEY or GATE from this process, no ~/.curlrc.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, LANG: 'C.UTF-8' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), output }));
  });
}
