/**
 * `pnpm bench`: the gateway against a plain node:http OpenAI upstream, side by side with calls
 * straight to that upstream, measured in the same run (these machines are noisy, so only the
 * ratios and differences mean anything). Logging and spending are on (a block limit, so every
 * request reserves and settles), on the embedded database. Prints throughput ratio, latency
 * overhead p50/p99 at a fixed 1,000 req/s, and the gateway's peak RSS.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const serverDir = path.resolve(import.meta.dirname, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
/** The gate's limit: block (reserve and settle per request), alert_only, or none. */
const SPENDING = (process.env.BENCH_SPENDING ?? 'block') as 'block' | 'alert_only' | 'none';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function ensureWrk(): void {
  if (spawnSync('wrk', ['--version']).error === undefined) return;
  console.log('wrk is missing: installing it from Debian (apt-get install wrk)');
  execFileSync('apt-get', ['install', '-y', '-qq', 'wrk'], { stdio: 'inherit' });
}

function wrk(url: string, headers: Record<string, string>, body: string, seconds: number): number {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-wrk-'));
  const script = path.join(dir, 'post.lua');
  writeFileSync(
    script,
    [
      'wrk.method = "POST"',
      `wrk.body = ${JSON.stringify(body)}`,
      ...Object.entries(headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`),
      // Non-2xx answers would flatter the gateway; count them and fail loudly.
      'done = function(summary, latency, requests)',
      '  io.write(string.format("non2xx %d\\n", summary.errors.status))',
      'end',
    ].join('\n'),
  );
  const out = execFileSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '-s', script, url], {
    encoding: 'utf8',
  });
  rmSync(dir, { recursive: true, force: true });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const bad = Number(/non2xx (\d+)/.exec(out)?.[1] ?? 0);
  if (!Number.isFinite(rps) || rps === 0 || bad > 0) throw new Error(`wrk against ${url} failed:\n${out}`);
  return rps;
}

type Latency = { sent: number; ok: number; errors: number; p50: number; p99: number; mean: number };

function fixedRate(url: string, headers: Record<string, string>, body: string): Latency {
  const out = execFileSync(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(import.meta.dirname, 'loadgen.ts'),
      url,
      String(RATE),
      String(SECONDS),
      JSON.stringify(headers),
      body,
    ],
    { encoding: 'utf8', cwd: serverDir },
  );
  const result = JSON.parse(out.trim().split('\n').at(-1) as string) as Latency;
  if (result.errors > 0) throw new Error(`${result.errors} requests to ${url} failed`);
  return result;
}

async function waitReady(base: string) {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the gateway did not become ready');
}

const peakRssMb = (pid: number) => {
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return kb / 1024;
};

ensureWrk();
// The upstream runs in a process of its own: this one blocks while wrk and the load generator run.
const upstreamPort = await freePort();
const upstreamProcess = spawn(
  process.execPath,
  ['--import', 'tsx', path.join(import.meta.dirname, 'upstream.ts')],
  {
    cwd: serverDir,
    env: { ...process.env, PORT: String(upstreamPort) },
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
await new Promise<void>((resolve, reject) => {
  upstreamProcess.stdout?.once('data', () => resolve());
  upstreamProcess.once('exit', () => reject(new Error('the upstream did not start')));
});
const upstream = { port: upstreamPort };
// The floor: a bare node:http + undici proxy in front of the same upstream (bench/proxy.ts).
const proxyPort = await freePort();
const proxyProcess = spawn(
  process.execPath,
  ['--import', 'tsx', path.join(import.meta.dirname, 'proxy.ts')],
  {
    cwd: serverDir,
    env: {
      ...process.env,
      PORT: String(proxyPort),
      UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}/v1/chat/completions`,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
await new Promise<void>((resolve, reject) => {
  proxyProcess.stdout?.once('data', () => resolve());
  proxyProcess.once('exit', () => reject(new Error('the reference proxy did not start')));
});
const port = await freePort();
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-'));
const gatewayEnv = {
  ...process.env,
  NODE_ENV: 'production',
  PORT: String(port),
  DATA_DIR: dataDir,
  // BENCH_DATABASE_URL runs the gateway on that PostgreSQL instead of the embedded database.
  DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '',
  GATEHOUSE_OPEN_SIGNUP: '1',
  OPENAI_API_KEY: 'bench',
  OPENAI_BASE_URL: `http://127.0.0.1:${upstream.port}/v1`,
  // As `pnpm start` sets it (packages/server/package.json).
  MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
};
// The gateway as `pnpm start` runs it: the built dist/main.mjs.
execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: serverDir, stdio: 'inherit' });
const startGateway = () =>
  spawn(process.execPath, ['dist/main.mjs'], {
    cwd: serverDir,
    env: gatewayEnv,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
const base = `http://127.0.0.1:${port}`;
// Creating a new PGlite database (initdb) is a one-time install step with a memory peak of its
// own: do it in a first process, and measure the gateway as it runs every later day.
const installer = startGateway();
await waitReady(base);
installer.kill('SIGTERM');
await new Promise((r) => installer.once('exit', r));
const gateway = startGateway();

try {
  await waitReady(base);
  const signup = (await (
    await fetch(`${base}/v1/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `bench-${Date.now()}@example.test`, password: 'benchmark-password' }),
    })
  ).json()) as { apiKey: { key: string } };
  const auth = { authorization: `Bearer ${signup.apiKey.key}`, 'content-type': 'application/json' };
  const gate = (await (
    await fetch(`${base}/v1/gates`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        name: 'bench',
        taskType: 'chat',
        model: 'openai/gpt-4o-mini',
        maxTokens: 16,
        ...(SPENDING !== 'none' && { spendingLimit: 1_000_000, spendingEnforcement: SPENDING }),
      }),
    })
  ).json()) as { id: string };

  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] });
  const direct = {
    url: `http://127.0.0.1:${upstream.port}/v1/chat/completions`,
    headers: { 'content-type': 'application/json' },
  };
  const viaGateway = {
    url: `${base}/v1/chat/completions`,
    headers: { ...auth, 'x-gatehouse-gate-id': gate.id },
  };

  console.log(`warming up (${Math.min(SECONDS, 5)} s)…`);
  wrk(viaGateway.url, viaGateway.headers, body, Math.min(SECONDS, 5));
  console.log(
    `throughput: wrk, 1 thread, ${CONNECTIONS} connections, ${SECONDS} s each (direct, gateway, bare proxy)…`,
  );
  const directRps = wrk(direct.url, direct.headers, body, SECONDS);
  const gatewayRps = wrk(viaGateway.url, viaGateway.headers, body, SECONDS);
  const proxyRps = wrk(`http://127.0.0.1:${proxyPort}/v1/chat/completions`, direct.headers, body, SECONDS);
  console.log(`latency: open loop at ${RATE} req/s, ${SECONDS} s each (direct, gateway, bare proxy)…`);
  const directLat = fixedRate(direct.url, direct.headers, body);
  const gatewayLat = fixedRate(viaGateway.url, viaGateway.headers, body);
  const proxyLat = fixedRate(`http://127.0.0.1:${proxyPort}/v1/chat/completions`, direct.headers, body);
  const rss = peakRssMb(gateway.pid as number);

  // This process sat blocked through the runs above: its pooled connection may have been closed
  // by the server's idle timeout meanwhile, so one retry on a fresh connection.
  const readGate = () => fetch(`${base}/v1/gates/${gate.id}`, { headers: auth });
  const check = (await (await readGate().catch(readGate)).json()) as { spendingCurrent: number };
  const ms = (n: number) => `${n.toFixed(2)} ms`;
  const ratio = gatewayRps / directRps;
  const p50 = gatewayLat.p50 - directLat.p50;
  const p99 = gatewayLat.p99 - directLat.p99;
  const verdict = (okay: boolean) => (okay ? 'meets target' : 'MISSES target');
  console.log('');
  const database = process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'PGlite';
  console.log(
    `Gatehouse benchmark: /v1/chat/completions, ${database}, logging on, spending limit: ${SPENDING}`,
  );
  console.log(`  throughput   direct ${directRps.toFixed(0)} req/s, gateway ${gatewayRps.toFixed(0)} req/s`);
  console.log(
    `  ratio        ${(ratio * 100).toFixed(1)} % of direct (target ≥ 40 %: ${verdict(ratio >= 0.4)})`,
  );
  console.log(
    `  reference    a bare node:http + undici proxy: ${proxyRps.toFixed(0)} req/s, ${((proxyRps / directRps) * 100).toFixed(1)} % of direct; the gateway does ${((gatewayRps / proxyRps) * 100).toFixed(0)} % of it`,
  );
  console.log(
    `  at ${RATE} req/s  direct p50 ${ms(directLat.p50)} p99 ${ms(directLat.p99)}; gateway p50 ${ms(gatewayLat.p50)} p99 ${ms(gatewayLat.p99)}`,
  );
  console.log(
    `  overhead     p50 ${ms(p50)} (target ≤ 1 ms: ${verdict(p50 <= 1)}), p99 ${ms(p99)} (target ≤ 5 ms: ${verdict(p99 <= 5)})`,
  );
  console.log(
    `  reference    the bare proxy's overhead at ${RATE} req/s: p50 ${ms(proxyLat.p50 - directLat.p50)}, p99 ${ms(proxyLat.p99 - directLat.p99)}`,
  );
  console.log(`  peak RSS     ${rss.toFixed(0)} MB (target ≤ 250 MB: ${verdict(rss <= 250)})`);
  console.log(`  spending     $${check.spendingCurrent.toFixed(6)} recorded on the gate`);
} finally {
  gateway.kill('SIGTERM');
  await new Promise((r) => gateway.once('exit', r));
  upstreamProcess.kill('SIGTERM');
  proxyProcess.kill('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
}
