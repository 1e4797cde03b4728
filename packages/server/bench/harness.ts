/**
 * What `pnpm bench` and `pnpm bench:soak` share: the processes they start (the upstream, the bare
 * proxy, the gateway as `pnpm start` runs it, Portkey's gateway), wrk, and the memory of a process
 * as Linux reports it.
 */
import { type ChildProcess, execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';

export const serverDir = path.resolve(import.meta.dirname, '..');
export const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Portkey's gateway, installed on demand outside the repository (it is no dependency of ours). */
const PORTKEY_VERSION = '1.15.2';
const PORTKEY_DIR = path.join(os.homedir(), '.cache', 'gatehouse-bench', `portkey-${PORTKEY_VERSION}`);

/** The chat request the benches send, and the block-limited gate the profiles call. */
export const CHAT = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] });
/**
 * A body the size and shape of a coding agent's turn (Claude Code and Codex send ~100-150 kB):
 * 40 tools with JSON Schemas, then 120 messages of a session, the assistant's tool calls and the
 * tools' results (file contents) among them. ASCII only: wrk's Lua takes it as a string literal.
 */
export function agentChat(): string {
  const line = (i: number) => `  const value${i} = compute(input.field${i % 7}, options); // step ${i}\n`;
  const file = (n: number, lines: number) => Array.from({ length: lines }, (_, i) => line(n + i)).join('');
  const tools = Array.from({ length: 40 }, (_, i) => ({
    type: 'function',
    function: {
      name: `tool_${i}`,
      description: `Tool ${i}: reads, edits or runs something in the workspace, as the agent asks. `.repeat(
        3,
      ),
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'The file, relative to the workspace root' },
          content: { type: 'string', description: 'What to write' },
          line: { type: 'integer', minimum: 1 },
          flags: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] } },
        },
        required: ['path'],
        additionalProperties: false,
      },
    },
  }));
  const messages: unknown[] = [
    { role: 'system', content: 'You are a coding agent working in a repository. '.repeat(40) },
  ];
  for (let turn = 0; messages.length < 120; turn++) {
    messages.push({ role: 'user', content: `Step ${turn}: fix the failing test in src/module${turn}.ts` });
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: `call_${turn}`,
          type: 'function',
          function: {
            name: `tool_${turn % 40}`,
            arguments: JSON.stringify({ path: `src/module${turn}.ts` }),
          },
        },
      ],
    });
    messages.push({ role: 'tool', tool_call_id: `call_${turn}`, content: file(turn * 10, 12) });
  }
  return JSON.stringify({ model: 'gpt-4o-mini', messages, tools });
}
export const BLOCK_GATE = {
  model: 'openai/gpt-4o-mini',
  maxTokens: 16,
  spendingLimit: 1_000_000,
  spendingEnforcement: 'block',
};

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Resident memory of a process now (VmRSS), or its peak so far (VmHWM), in MB. */
export function rssMb(pid: number, which: 'now' | 'peak' = 'now'): number {
  const field = which === 'now' ? /VmRSS:\s+(\d+) kB/ : /VmHWM:\s+(\d+) kB/;
  const kb = Number(field.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return kb / 1024;
}

/** The fields of a /proc `stat` file after the command's name: [1] ppid, [11] utime, [12] stime, ... */
function statFields(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/** CPU time (user + system, in ms) in a /proc `stat` file, of a process or of one of its threads. */
function statCpuMs(file: string): number {
  const fields = statFields(file);
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** CPU time a process has used (user + system), in ms. */
export function cpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** CPU time each thread of a process has used, in ms, by thread id (the main thread's is the pid), with its name. */
export function threadCpuMs(pid: number): Map<number, { name: string; ms: number }> {
  const threads = new Map<number, { name: string; ms: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      threads.set(Number(tid), { name, ms: statCpuMs(`/proc/${pid}/task/${tid}/stat`) });
    } catch {} // a thread that ended meanwhile
  }
  return threads;
}

/**
 * CPU time the PostgreSQL server on this machine has used, in ms: every `postgres` process's, and
 * what the postmaster's children that ended had used (a backend or autovacuum worker that exits
 * during a measurement still counts). Null when no `postgres` process runs here (a remote server).
 */
export function postgresCpuMs(): number | null {
  const procs: { pid: number; ppid: number; fields: string[] }[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      const fields = statFields(`/proc/${pid}/stat`);
      procs.push({ pid: Number(pid), ppid: Number(fields[1]), fields });
    } catch {} // a process that ended meanwhile
  }
  if (procs.length === 0) return null;
  const pids = new Set(procs.map((p) => p.pid));
  let ticks = 0;
  for (const { ppid, fields } of procs) {
    ticks += Number(fields[11]) + Number(fields[12]);
    if (!pids.has(ppid)) ticks += Number(fields[13]) + Number(fields[14]); // the postmaster's reaped children
  }
  return (ticks * 1000) / 100;
}

/**
 * The pid of the Redis server listening on `redisUrl`'s port on this machine (a `redis-server`
 * process whose command line names that port), or null when it runs elsewhere: its CPU is then
 * not counted.
 */
export function redisPid(redisUrl: string): number | null {
  const port = new URL(redisUrl).port || '6379';
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'redis-server') continue;
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (new RegExp(`:${port}\\b`).test(args)) return Number(pid);
    } catch {} // a process that ended meanwhile
  }
  return null;
}

/** CPU time the whole machine has been busy, all cores together, in ms (/proc/stat). */
export function machineBusyMs(): number {
  const ticks = (readFileSync('/proc/stat', 'utf8').split('\n')[0] as string)
    .split(/\s+/)
    .slice(1)
    .map(Number);
  // user, nice, system, (idle, iowait,) irq, softirq; not steal: time the hypervisor ran others
  const busy = [0, 1, 2, 5, 6].reduce((sum, i) => sum + (ticks[i] ?? 0), 0);
  return (busy * 1000) / 100;
}

/**
 * Where the machine's CPU went while `run` answered `requests()` requests: µs per request of each
 * process in `parts`, of the threads of `threadsOf` (its main thread, its thread named `pglite`,
 * the others), of the PostgreSQL server on this machine (null without one), and of the rest of the
 * machine (wrk, this script), and how busy the machine was.
 */
export async function cpuPerRequest<T>(
  parts: Record<string, number>,
  threadsOf: number | null,
  run: () => Promise<T>,
  requests: (result: T) => number,
) {
  const threadsNow = () => (threadsOf === null ? new Map() : threadCpuMs(threadsOf));
  const before = {
    parts: Object.fromEntries(Object.entries(parts).map(([k, pid]) => [k, cpuMs(pid)])),
    threads: threadsNow(),
    postgres: postgresCpuMs(),
    machine: machineBusyMs(),
    at: performance.now(),
  };
  const result = await run();
  const n = requests(result);
  const us = (ms: number) => (ms * 1000) / n;
  const perPart = Object.fromEntries(
    Object.entries(parts).map(([k, pid]) => [k, us(cpuMs(pid) - (before.parts[k] ?? 0))]),
  );
  const threads = { main: 0, database: 0, others: 0 };
  for (const [tid, { name, ms }] of threadsNow()) {
    const used = us(ms - (before.threads.get(tid)?.ms ?? 0));
    if (tid === threadsOf) threads.main += used;
    else if (name === 'pglite') threads.database += used;
    else threads.others += used;
  }
  const postgresNow = postgresCpuMs();
  const postgres =
    postgresNow === null || before.postgres === null ? null : us(postgresNow - before.postgres);
  const machineMs = machineBusyMs() - before.machine;
  const seconds = (performance.now() - before.at) / 1000;
  const accounted = Object.values(perPart).reduce((a, b) => a + b, 0) + (postgres ?? 0);
  return {
    result,
    perPart,
    ...threads,
    postgres,
    rest: Math.max(0, us(machineMs) - accounted),
    /** The machine's busy time over the run, as a share of all its cores' time. */
    busyShare: machineMs / 1000 / (seconds * os.cpus().length),
  };
}

/** Samples a process's RSS every 100 ms until stopped; returns the highest seen. */
export function watchRss(pid: number): () => number {
  let peak = rssMb(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssMb(pid));
    } catch {}
  }, 100);
  return () => {
    clearInterval(timer);
    return peak;
  };
}

export function ensureWrk(): void {
  if (spawnSync('wrk', ['--version']).error === undefined) return;
  console.log('wrk is missing: installing it from Debian (apt-get install wrk)');
  execFileSync('apt-get', ['install', '-y', '-qq', 'wrk'], { stdio: 'inherit' });
}

/**
 * wrk's requests per second; any non-2xx answer fails the run rather than flatter it. One thread,
 * or `spread.threads`, each connecting to one of `spread.ports` in turn (the connections shared
 * among the threads): several servers behind one load without a balancer of its own.
 */
export const wrk = async (...args: Parameters<typeof wrkRun>): Promise<number> => (await wrkRun(...args)).rps;

/** wrk's figure `"635.00us"`, `"1.23ms"` or `"2.01s"` in milliseconds. */
function wrkMs(figure: string | undefined): number {
  const m = /^([\d.]+)(us|ms|s)$/.exec(figure ?? '');
  if (!m) return Number.NaN;
  return Number(m[1]) * { us: 0.001, ms: 1, s: 1000 }[m[2] as 'us' | 'ms' | 's'];
}

/** As `wrk`, with the latency's p50 and p99 in ms (wrk --latency: closed loop, each connection waits). */
export async function wrkRun(
  url: string,
  headers: Record<string, string>,
  body: string,
  seconds: number,
  connections: number,
  spread: { threads: number; ports: number[] } | null = null,
): Promise<{ rps: number; p50: number; p99: number; requests: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-wrk-'));
  const script = path.join(dir, 'post.lua');
  const host = new URL(url).hostname;
  writeFileSync(
    script,
    [
      ...(spread
        ? [
            `local ports = { ${spread.ports.map((p) => JSON.stringify(String(p))).join(', ')} }`,
            'local n = 0',
            'setup = function(thread)',
            '  n = n + 1',
            `  thread.addr = wrk.lookup(${JSON.stringify(host)}, ports[(n - 1) % #ports + 1])[1]`,
            'end',
          ]
        : []),
      'wrk.method = "POST"',
      `wrk.body = ${JSON.stringify(body)}`,
      ...Object.entries(headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`),
      'done = function(summary, latency, requests)',
      '  io.write(string.format("non2xx %d\\n", summary.errors.status))',
      '  io.write(string.format("requests %d\\n", summary.requests))',
      'end',
    ].join('\n'),
  );
  const out = await new Promise<string>((resolve, reject) =>
    execFile(
      'wrk',
      [`-t${spread?.threads ?? 1}`, `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, url],
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    ),
  );
  rmSync(dir, { recursive: true, force: true });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const bad = Number(/non2xx (\d+)/.exec(out)?.[1] ?? 0);
  if (!Number.isFinite(rps) || rps === 0 || bad > 0) throw new Error(`wrk against ${url} failed:\n${out}`);
  const percentile = (p: number) => wrkMs(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(out)?.[1]);
  const requests = Number(/^requests (\d+)/m.exec(out)?.[1]);
  return { rps, p50: percentile(50), p99: percentile(99), requests };
}

/** Starts a process and resolves once it writes its first line to stdout. */
export async function startListening(
  label: string,
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  cwd = serverDir,
): Promise<ChildProcess> {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once('data', () => resolve());
    child.once('exit', () => reject(new Error(`${label} did not start`)));
  });
  child.stdout?.resume();
  return child;
}

export async function stop(child: ChildProcess | null | undefined) {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** The upstream (bench/upstream.ts) in a process of its own. */
export async function startUpstream() {
  const port = await freePort();
  const child = await startListening(
    'the upstream',
    process.execPath,
    ['--import', 'tsx', path.join(import.meta.dirname, 'upstream.ts')],
    { PORT: String(port) },
  );
  return { port, child };
}

/** The floor: a bare node:http + undici proxy in front of the same upstream (bench/proxy.ts). */
export async function startProxy(upstreamPort: number) {
  const port = await freePort();
  const child = await startListening(
    'the reference proxy',
    process.execPath,
    ['--import', 'tsx', path.join(import.meta.dirname, 'proxy.ts')],
    { PORT: String(port), UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}/v1/chat/completions` },
  );
  return { port, child };
}

export function buildServer() {
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: serverDir, stdio: 'inherit' });
}

export type Database = {
  label: 'PGlite' | 'PostgreSQL' | 'PostgreSQL + Redis';
  url: string | null;
  /** With Redis: its URL and this run's key prefix (GATEHOUSE_REDIS_PREFIX); else null. */
  redis: { url: string; prefix: string } | null;
  dataDir: string;
  cleanup(): Promise<void>;
};

/** Deletes every key under a deployment's prefix (its keys are hash-tagged `{prefix}:…`). */
async function dropRedisKeys(client: Redis, prefix: string) {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `{${prefix}}:*`, 'COUNT', 1000);
    if (keys.length > 0) await client.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/**
 * A new, empty database: a PGlite data directory, or `name` recreated on BENCH_POSTGRES_URL's
 * server, with (`redis`) BENCH_REDIS_URL's Redis under a prefix of its own, whose keys are deleted
 * at cleanup. Null, with the reason printed, when the server it needs does not answer.
 */
export async function newDatabase(
  kind: 'pglite' | 'postgres' | 'redis',
  name: string,
): Promise<Database | null> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-'));
  const removeDir = async () => rmSync(dataDir, { recursive: true, force: true });
  if (kind === 'pglite') return { label: 'PGlite', url: null, redis: null, dataDir, cleanup: removeDir };
  let redis: Database['redis'] = null;
  if (kind === 'redis') {
    const client = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.ping();
    } catch (error) {
      console.log(`Redis at ${REDIS_URL} does not answer (${(error as Error).message}): skipping it`);
      client.disconnect();
      await removeDir();
      return null;
    }
    client.disconnect();
    redis = { url: REDIS_URL, prefix: `${name}-${process.pid}` };
  }
  const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
  } catch (error) {
    console.log(`PostgreSQL at ${POSTGRES_URL} does not answer (${(error as Error).message}): skipping it`);
    await removeDir();
    return null;
  }
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  if (!redis) return { label: 'PostgreSQL', url: url.toString(), redis, dataDir, cleanup: removeDir };
  const { prefix } = redis;
  const cleanup = async () => {
    await removeDir();
    const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 0 });
    try {
      await dropRedisKeys(client, prefix);
    } finally {
      client.disconnect();
    }
  };
  return { label: 'PostgreSQL + Redis', url: url.toString(), redis, dataDir, cleanup };
}

async function waitReady(base: string, child: ChildProcess) {
  for (let i = 0; i < 1200; i++) {
    if (child.exitCode !== null) throw new Error(`the gateway exited (code ${child.exitCode})`);
    try {
      if ((await fetch(`${base}/readyz`)).ok) return;
    } catch {}
    await sleep(50);
  }
  throw new Error('the gateway did not become ready');
}

/** BENCH_NODE_ARGS: Node and V8 flags for every gateway a bench starts, space-separated. */
export const benchNodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

/**
 * The gateway as `pnpm start` runs it (the built dist/main.mjs), ready to answer; for an A/B,
 * another build as `entry` or Node and V8 flags as `nodeArgs` (by default benchNodeArgs: how the
 * `--heap-growing-percent` and `--max-semi-space-size` trials were run).
 */
export async function startGateway(
  db: Database,
  upstreamPort: number,
  entry = 'dist/main.mjs',
  nodeArgs: string[] = benchNodeArgs,
) {
  const port = await freePort();
  // BENCH_GATEWAY_STDOUT: the gateway's standard output (its process log's JSON lines, and V8's
  // --trace-gc lines with BENCH_NODE_ARGS) is added to this file, every gateway's; else nowhere.
  const outFile = process.env.BENCH_GATEWAY_STDOUT;
  const stdout = outFile ? openSync(outFile, 'a') : undefined;
  const child = spawn(process.execPath, ['--enable-source-maps', ...nodeArgs, entry], {
    cwd: serverDir,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      DATA_DIR: db.dataDir,
      DATABASE_URL: db.url ?? '',
      // Set or emptied: never Redis from the calling shell on a run that is to go without it.
      REDIS_URL: db.redis?.url ?? '',
      ...(db.redis && { GATEHOUSE_REDIS_PREFIX: db.redis.prefix }),
      GATEHOUSE_OPEN_SIGNUP: '1',
      OPENAI_API_KEY: 'bench',
      OPENAI_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`,
      // As `pnpm start` sets it (packages/server/package.json).
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
    },
    stdio: ['ignore', stdout ?? 'ignore', 'inherit'],
  });
  if (stdout !== undefined) closeSync(stdout);
  const base = `http://127.0.0.1:${port}`;
  const started = performance.now();
  await waitReady(base, child);
  return { child, base, port, pid: child.pid as number, readyMs: performance.now() - started };
}

/** Signs a new user up and creates `gates`; answers the headers that call each gate. */
export async function setUp(base: string, gates: Record<string, Record<string, unknown>>) {
  const signup = (await (
    await fetch(`${base}/v1/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `bench-${Date.now()}@example.test`, password: 'benchmark-password' }),
    })
  ).json()) as { apiKey: { key: string } };
  const auth = { authorization: `Bearer ${signup.apiKey.key}`, 'content-type': 'application/json' };
  const headers: Record<string, Record<string, string>> = {};
  const ids: Record<string, string> = {};
  for (const [name, fields] of Object.entries(gates)) {
    const res = await fetch(`${base}/v1/gates`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name, taskType: 'chat', ...fields }),
    });
    const gate = (await res.json()) as { id: string };
    if (!res.ok) throw new Error(`creating the gate ${name} failed: ${JSON.stringify(gate)}`);
    ids[name] = gate.id;
    headers[name] = { ...auth, 'x-gatehouse-gate-id': gate.id };
  }
  return { auth, headers, ids };
}

/**
 * Portkey's open-source gateway (`@portkey-ai/gateway`), installed into a cache directory outside
 * the repository on first use and started as its own process, in front of the same upstream.
 * Null, with the reason printed, when it cannot be installed, started, or answer through the
 * upstream.
 */
export async function startPortkey(upstreamPort: number) {
  const entry = path.join(PORTKEY_DIR, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');
  if (!existsSync(entry)) {
    console.log(`installing @portkey-ai/gateway@${PORTKEY_VERSION} into ${PORTKEY_DIR} (once)…`);
    mkdirSync(PORTKEY_DIR, { recursive: true });
    const npm = spawnSync(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefix',
        PORTKEY_DIR,
        `@portkey-ai/gateway@${PORTKEY_VERSION}`,
      ],
      { encoding: 'utf8' },
    );
    if (npm.status !== 0 || !existsSync(entry)) {
      console.log(
        `Portkey's gateway could not be installed (${npm.error ?? npm.stderr}): skipping that comparison`,
      );
      return null;
    }
  }
  const port = await freePort();
  let child: ChildProcess;
  try {
    child = await startListening(
      'Portkey',
      process.execPath,
      [entry, `--port=${port}`, '--headless'],
      {},
      PORTKEY_DIR,
    );
  } catch (error) {
    console.log(`Portkey's gateway did not start (${(error as Error).message}): skipping that comparison`);
    return null;
  }
  const headers = {
    'content-type': 'application/json',
    authorization: 'Bearer bench',
    'x-portkey-provider': 'openai',
    'x-portkey-custom-host': `http://127.0.0.1:${upstreamPort}/v1`,
  };
  const url = `http://127.0.0.1:${port}/v1/chat/completions`;
  // It prints before it listens: ask until it answers, and check the answer is the upstream's.
  for (let i = 0; ; i++) {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] }),
      });
      const answer = (await res.json()) as { choices?: { message?: { content?: string } }[] };
      if (res.ok && answer.choices?.[0]?.message?.content === 'pong') break;
      throw new Error(`answered ${res.status} ${JSON.stringify(answer).slice(0, 200)}`);
    } catch (error) {
      if (i < 50 && (error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED') {
        await sleep(100);
        continue;
      }
      console.log(
        `Portkey's gateway does not answer through the upstream (${(error as Error).message}): skipping`,
      );
      await stop(child);
      return null;
    }
  }
  return { child, url, headers, pid: child.pid as number };
}

/** The part a frame belongs to: a package, one of our files, Node's internals, or V8's own. */
export function partOf(url: string, name: string): string {
  if (name === '(garbage collector)') return 'garbage collection';
  if (name === '(idle)' || name === '(program)' || name === '(root)') return name;
  if (url === '') return name.startsWith('(') ? name : 'native';
  const pkg = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/').slice(0, 3).join('/')}`;
  const ours = /\/(src|dist)\/(.*)$/.exec(url);
  if (ours) return ours[2] as string;
  return url;
}

/** Prints `title` and the `top` largest of `figures`, each as `format` writes it. */
export function printTop(
  title: string,
  figures: Map<string, number>,
  format: (n: number) => string,
  top: number,
) {
  console.log(`  ${title}:`);
  for (const [name, n] of [...figures].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`    ${format(n)}  ${name}`);
}
