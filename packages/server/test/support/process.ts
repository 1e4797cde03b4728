/**
 * The real server process (src/main.ts, under tsx), for tests of what only a process shows:
 * signals, sockets, Node's own HTTP parser and timeouts. It keeps its data in PGlite under
 * `dataDir`, and is returned once /readyz answers 200 (45 s at most).
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

// tsx is the server package's dependency: start the process where it resolves.
const serverDir = path.resolve(import.meta.dirname, '../..');

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

export async function startServerProcess(dataDir: string, env: Record<string, string> = {}) {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: serverDir,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      GATEHOUSE_OPEN_SIGNUP: '1',
      // The suites sign their users up from 127.0.0.1.
      GATEHOUSE_SIGNUP_ADDRESS_LIMIT: '1000000',
      // A loaded machine may take seconds over one transaction (5 s in production, then a 503).
      GATEHOUSE_TRANSACTION_TIMEOUT_MS: '30000',
      NODE_ENV: 'test',
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
  const deadline = Date.now() + 45_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited early:\n${output}`);
    const status = await fetch(`${url}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the server was not ready within 45 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, port, url, output: () => output };
}
