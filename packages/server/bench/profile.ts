/**
 * `pnpm --filter @gatehouse/server bench:profile`: where the gateway's CPU goes under the bench's
 * load (issue 30: "the flame is the plan"). It builds the server, starts the bench's upstream and
 * the gateway with `--cpu-prof` on a new database (BENCH_PROFILE_DATABASE: `pglite`, the default,
 * or `postgres`), the bench's block-limited gate, warms up, then runs wrk c32 for
 * BENCH_PROFILE_SECONDS (15) and stops the gateway so that it writes its profile (the request
 * thread's: PGlite's thread is terminated, not exited, and writes none; its CPU is in the figures).
 * It prints the CPU per request of each thread and, from the profile, the self time by part (our
 * bundle, each package under node_modules, Node's internals, garbage collection, the rest) and the
 * heaviest functions. The profiles stay in the printed directory for Chrome's DevTools
 * (Performance, "Load profile") or speedscope.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  BLOCK_GATE,
  benchNodeArgs,
  buildServer,
  CHAT,
  cpuPerRequest,
  ensureWrk,
  newDatabase,
  partOf,
  printTop,
  rssMb,
  setUp,
  sleep,
  startGateway,
  startUpstream,
  stop,
  wrk,
} from './harness.ts';

const SECONDS = Number(process.env.BENCH_PROFILE_SECONDS ?? 15);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const KIND = (process.env.BENCH_PROFILE_DATABASE ?? 'pglite') as 'pglite' | 'postgres';
const TOP = Number(process.env.BENCH_PROFILE_TOP ?? 25);

type Node = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

function summarise(file: string, requests: number) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i] as number;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const parts = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = (byId.get(id) as Node).callFrame;
    const part = partOf(url, functionName);
    if (part === '(idle)') continue;
    busy += us;
    parts.set(part, (parts.get(part) ?? 0) + us);
    const where = `${functionName || '(anonymous)'} ${part}:${lineNumber + 1}`;
    functions.set(where, (functions.get(where) ?? 0) + us);
  }
  const perRequest = (us: number) =>
    `${(us / requests).toFixed(1).padStart(6)} µs  ${((100 * us) / busy).toFixed(1).padStart(5)} %`;
  console.log(`\n${path.basename(file)}: ${(busy / requests).toFixed(0)} µs of samples a request`);
  printTop('by part', parts, perRequest, TOP);
  printTop('heaviest functions (self time)', functions, perRequest, TOP);
}

ensureWrk();
buildServer();
const db = await newDatabase(KIND, 'gatehouse_bench_profile');
if (!db) process.exit(1);
const upstream = await startUpstream();
const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-profile-'));
// The warm-up is profiled too; sampling at 250 µs keeps the profile's own cost small.
const gateway = await startGateway(db, upstream.port, 'dist/main.mjs', [
  ...benchNodeArgs,
  '--cpu-prof',
  `--cpu-prof-dir=${dir}`,
  '--cpu-prof-interval=250',
]);
try {
  const { headers } = await setUp(gateway.base, { bench: BLOCK_GATE });
  const url = `${gateway.base}/v1/chat/completions`;
  const h = headers.bench as Record<string, string>;
  console.log(`warming up (5 s), then wrk c${CONNECTIONS} for ${SECONDS} s…`);
  await wrk(url, h, CHAT, 5, CONNECTIONS);
  await sleep(2000);
  const load = await cpuPerRequest(
    { gateway: gateway.pid },
    gateway.pid,
    () => wrk(url, h, CHAT, SECONDS, CONNECTIONS),
    (rps) => rps * SECONDS,
  );
  const requests = load.result * SECONDS;
  console.log(
    `${load.result.toFixed(0)} req/s; CPU a request: gateway ${load.perPart.gateway?.toFixed(0)} µs ` +
      `(main thread ${load.main.toFixed(0)}, database thread ${load.database.toFixed(0)}, ` +
      `others ${load.others.toFixed(0)})${load.postgres === null ? '' : `, PostgreSQL server ${load.postgres.toFixed(0)} µs`}; ` +
      `machine ${(100 * load.busyShare).toFixed(0)} % busy; peak RSS ${rssMb(gateway.pid, 'peak').toFixed(0)} MB ` +
      "(the profiler's own included)",
  );
  await stop(gateway.child);
  // The profiles hold the warm-up as well: their per-request figures count the warm-up's requests
  // in proportion (5 s of the same load), so they read as shares more than as absolutes.
  const profiled = requests * ((SECONDS + 5) / SECONDS);
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')))
    summarise(path.join(dir, file), profiled);
  console.log(`\nprofiles: ${dir}`);
} finally {
  await stop(gateway.child);
  await stop(upstream.child);
  await db.cleanup();
}
