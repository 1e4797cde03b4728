import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { launchServer } from '../../packages/server/test/support/process.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const webDist = path.join(repoRoot, 'packages/web/dist');

export type RunningServer = {
  url: string;
  /** What the server printed so far; shown when something goes wrong. */
  output(): string;
  stop(): Promise<void>;
};

/**
 * The real Gatehouse as users start it (the built dist/main.mjs), on a free port, over a fresh PGlite data
 * directory, serving the built dashboard. Sign-up is closed but for the first account.
 */
export async function startServer(env: Record<string, string> = {}): Promise<RunningServer> {
  if (!existsSync(path.join(webDist, 'index.html'))) {
    throw new Error(`${webDist} has no build: run \`pnpm build\` before the browser tests`);
  }
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-e2e-'));
  const removeDataDir = () => rm(dataDir, { recursive: true, force: true });
  try {
    const server = await launchServer({
      from: 'built',
      dataDir,
      readyWithinMs: 110_000,
      env: {
        GATEHOUSE_OPEN_SIGNUP: '0',
        GATEHOUSE_WEB_DIST: webDist,
        // The browser flows set reanalysis periods and auto-apply; the scheduler must not change
        // their gates behind them (its own test runs two real processes: architect-processes).
        GATEHOUSE_ARCHITECT_INTERVAL_MS: '0',
        ...env,
      },
    });
    return {
      url: server.url,
      output: server.output,
      stop: async () => {
        await server.stop();
        await removeDataDir();
      },
    };
  } catch (error) {
    await removeDataDir();
    throw error;
  }
}
