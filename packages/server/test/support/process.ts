/**
 * The real server process, for tests of what only a process shows (signals, sockets, Node's own
 * HTTP parser and timeouts) and for the e2e suite: src/main.ts under tsx, or the built
 * dist/main.mjs as `pnpm start` runs it. It keeps its data in PGlite under `dataDir` (unless `env`
 * names a DATABASE_URL), listens on a free port of 127.0.0.1, and is returned once /readyz
 * answers 200.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

// tsx is the server package's dependency: start the process where it resolves.
const serverDir = path.resolve(import.meta.dirname, '../..');

export type ServerProcessOptions = {
  /** `source`: src/main.ts under tsx; `built`: dist/main.mjs (`pnpm build` first). */
  from: 'source' | 'built';
  dataDir: string;
  /** Over the defaults below and the test process's own environment. */
  env?: Record<string, string>;
  /** How long /readyz may take to answer 200 before the process is killed (45 s unless told). */
  readyWithinMs?: number;
};

export type ServerProcess = {
  child: ChildProcess;
  port: number;
  url: string;
  /** What the server printed so far; shown when something goes wrong. */
  output(): string;
  /** SIGTERM, SIGKILL after 10 s, and the exit awaited. */
  stop(): Promise<void>;
};

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

async function stopProcess(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited(child);
  clearTimeout(timer);
}

const ENTRIES = {
  source: { args: ['--import', 'tsx', 'src/main.ts'], env: {} },
  // As `pnpm start` sets it (packages/server/package.json).
  built: { args: ['dist/main.mjs'], env: { MALLOC_ARENA_MAX: '2' } },
} satisfies Record<ServerProcessOptions['from'], { args: string[]; env: Record<string, string> }>;

export async function launchServer(options: ServerProcessOptions): Promise<ServerProcess> {
  if (options.from === 'built' && !existsSync(path.join(serverDir, 'dist/main.mjs'))) {
    throw new Error(`${serverDir}/dist has no build: run \`pnpm build\` first`);
  }
  const entry = ENTRIES[options.from];
  const port = await freePort();
  const child = spawn(process.execPath, entry.args, {
    cwd: serverDir,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: options.dataDir,
      DATABASE_URL: '',
      ...entry.env,
      NODE_ENV: 'test',
      GATEHOUSE_OPEN_SIGNUP: '1',
      // The suites sign their users up from 127.0.0.1.
      GATEHOUSE_SIGNUP_ADDRESS_LIMIT: '1000000',
      // A loaded machine may take seconds over one transaction (5 s in production, then a 503).
      GATEHOUSE_TRANSACTION_TIMEOUT_MS: '30000',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const url = `http://127.0.0.1:${port}`;
  const readyWithinMs = options.readyWithinMs ?? 45_000;
  const deadline = Date.now() + readyWithinMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const how = child.exitCode !== null ? `with code ${child.exitCode}` : `on ${child.signalCode}`;
      throw new Error(`the server exited ${how} before it was ready:\n${output}`);
    }
    const status = await fetch(`${url}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      await exited(child);
      throw new Error(
        `the server did not answer GET /readyz with 200 within ${readyWithinMs / 1000} s:\n${output}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, port, url, output: () => output, stop: () => stopProcess(child) };
}

/** src/main.ts under tsx, over PGlite in `dataDir`, sign-up open. */
export function startServerProcess(
  dataDir: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  return launchServer({ from: 'source', dataDir, env });
}
