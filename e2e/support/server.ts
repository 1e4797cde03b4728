import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const serverDir = path.join(repoRoot, 'packages/server');
const webDist = path.join(repoRoot, 'packages/web/dist');

export type RunningServer = {
  url: string;
  /** What the server printed so far; shown when something goes wrong. */
  output(): string;
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

/**
 * The real Gatehouse as users start it (the built dist/main.mjs), on a free port, over a fresh PGlite data
 * directory, serving the built dashboard. Sign-up is closed but for the first account.
 */
export async function startServer(env: Record<string, string> = {}): Promise<RunningServer> {
  if (!existsSync(path.join(webDist, 'index.html'))) {
    throw new Error(`${webDist} has no build: run \`pnpm build\` before the browser tests`);
  }
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-e2e-'));
  const port = await freePort();
  if (!existsSync(path.join(serverDir, 'dist/main.mjs'))) {
    throw new Error(`${serverDir}/dist has no build: run \`pnpm build\` before the browser tests`);
  }
  const child = spawn(process.execPath, ['dist/main.mjs'], {
    cwd: serverDir,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      // As `pnpm start` sets it (packages/server/package.json).
      MALLOC_ARENA_MAX: '2',
      NODE_ENV: 'test',
      GATEHOUSE_OPEN_SIGNUP: '0',
      // Every file signs its users up from 127.0.0.1, on the one server they share.
      GATEHOUSE_SIGNUP_ADDRESS_LIMIT: '1000000',
      GATEHOUSE_WEB_DIST: webDist,
      // The browser flows set reanalysis periods and auto-apply; the scheduler must not change
      // their gates behind them (its own test runs two real processes: architect-processes).
      GATEHOUSE_ARCHITECT_INTERVAL_MS: '0',
      // A loaded machine may take seconds over one transaction (5 s in production, then a 503).
      GATEHOUSE_TRANSACTION_TIMEOUT_MS: '30000',
      ...env,
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
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited(child);
      clearTimeout(timer);
    }
    await rm(dataDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`The server exited with code ${child.exitCode} before it was ready:\n${output}`);
    }
    const status = await fetch(`${url}/readyz`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return { url, output: () => output, stop };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await stop();
  throw new Error(`The server did not answer GET /readyz with 200 within 60 s:\n${output}`);
}
