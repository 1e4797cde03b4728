/**
 * `pnpm --filter @gatehouse/server bench:profile`: where the gateway's CPU goes under the bench's
 * load (issue 30: "the flame is the plan"). It builds the server, starts the bench's upstream and
 * the gateway with `--cpu-prof` on a new database (BENCH_PROFILE_DATABASE: `pglite`, the default,
 * or `postgres`), the bench's block-limited gate, warms up, then runs wrk c32 (c4 with a coding
 * agent's turn as the body: BENCH_PROFILE_BODY=agent) for BENCH_PROFILE_SECONDS (15) and stops the gateway so that it writes its profiles: the request
 * thread's and, on PGlite, the database thread's (the server passes --cpu-prof on to it). It
 * prints the CPU per request of each thread and, from each profile, the self time by part (our
 * bundle, each package under node_modules, Node's internals, garbage collection, the rest) and the
 * heaviest functions, PostgreSQL's named where PGlite's WebAssembly exports them; on the database
 * thread also the time spent under each of PostgreSQL's named functions (callees included). The
 * profiles stay in the printed directory for Chrome's DevTools (Performance, "Load profile") or
 * speedscope.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  agentChat,
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

// BENCH_PROFILE_BODY=agent: a coding agent's turn instead of the bench's one-word chat.
const AGENT = process.env.BENCH_PROFILE_BODY === 'agent';
const BODY = AGENT ? agentChat() : CHAT;
const SECONDS = Number(process.env.BENCH_PROFILE_SECONDS ?? 15);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? (AGENT ? 4 : 32));
const KIND = (process.env.BENCH_PROFILE_DATABASE ?? 'pglite') as 'pglite' | 'postgres';
const TOP = Number(process.env.BENCH_PROFILE_TOP ?? 25);

type Node = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

/**
 * The names of the functions PGlite's WebAssembly module exports, by function index (V8's
 * `wasm-function[i]`): it is built to let extensions link against PostgreSQL, so ~2,000 of its
 * functions are named in its export table, though it has no name section. An export's index
 * counts the imported functions first, as V8's does.
 */
function pgliteFunctionNames(): Map<number, string> {
  const dist = path.dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
  const bytes = readFileSync(path.join(dist, 'pglite.wasm'));
  let at = 8; // magic and version
  const leb = () => {
    let value = 0;
    let shift = 0;
    for (;;) {
      const byte = bytes[at++] as number;
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
      if (byte < 0x80) return value;
    }
  };
  const name = () => {
    const length = leb();
    at += length;
    return bytes.toString('utf8', at - length, at);
  };
  const names = new Map<number, string>();
  while (at < bytes.length) {
    const section = bytes[at++] as number;
    const end = leb() + at;
    if (section === 7) {
      for (let n = leb(); n > 0; n--) {
        const exported = name();
        const kind = bytes[at++];
        const index = leb();
        if (kind === 0 && !names.has(index)) names.set(index, exported);
      }
    }
    at = end;
  }
  return names;
}

const WASM_FUNCTION = /^wasm-function\[(\d+)\]$/;

function summarise(file: string, requests: number, wasmNames: Map<number, string> | null) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i] as number;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  /** PostgreSQL's name of a WebAssembly function on the database thread, where it is exported. */
  const wasmName = (frame: Node['callFrame']) => {
    const index = wasmNames && WASM_FUNCTION.exec(frame.functionName)?.[1];
    const named = index ? wasmNames.get(Number(index)) : undefined;
    return named && `${named} [${index}]`;
  };
  const nameOf = (frame: Node['callFrame']) => wasmName(frame) || frame.functionName || '(anonymous)';
  const parts = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of self) {
    const frame = (byId.get(id) as Node).callFrame;
    const part =
      wasmNames && frame.url.startsWith('wasm://')
        ? 'PostgreSQL (WebAssembly)'
        : partOf(frame.url, frame.functionName);
    if (part === '(idle)') continue;
    busy += us;
    parts.set(part, (parts.get(part) ?? 0) + us);
    const where = `${nameOf(frame)} ${part}:${frame.lineNumber + 1}`;
    functions.set(where, (functions.get(where) ?? 0) + us);
  }
  const perRequest = (us: number) =>
    `${(us / requests).toFixed(1).padStart(6)} µs  ${((100 * us) / busy).toFixed(1).padStart(5)} %`;
  const thread = wasmNames ? 'the database thread' : 'the request thread';
  console.log(
    `\n${path.basename(file)} (${thread}): ${(busy / requests).toFixed(0)} µs of samples a request`,
  );
  printTop('by part', parts, perRequest, TOP);
  printTop('heaviest functions (self time)', functions, perRequest, TOP);
  if (!wasmNames) return;
  // Time under each named PostgreSQL function, its callees included (counted once a stack).
  const under = new Map<string, number>();
  const total = (node: Node, seen: ReadonlySet<string>): number => {
    const named = wasmName(node.callFrame);
    const counts = named !== undefined && !seen.has(named);
    const inside = counts ? new Set(seen).add(named) : seen;
    let us = self.get(node.id) ?? 0;
    for (const child of node.children ?? []) us += total(byId.get(child) as Node, inside);
    if (counts) under.set(named, (under.get(named) ?? 0) + us);
    return us;
  };
  total(profile.nodes[0] as Node, new Set());
  printTop("PostgreSQL's named functions (callees included)", under, perRequest, TOP);
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
  console.log(
    `${AGENT ? `a coding agent's turn (${(BODY.length / 1024).toFixed(0)} kB)` : 'the bench chat'}: warming up (5 s), then wrk c${CONNECTIONS} for ${SECONDS} s…`,
  );
  await wrk(url, h, BODY, 5, CONNECTIONS);
  await sleep(2000);
  const load = await cpuPerRequest(
    { gateway: gateway.pid },
    gateway.pid,
    () => wrk(url, h, BODY, SECONDS, CONNECTIONS),
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
  // CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile: thread 0 is the request thread; on PGlite the
  // other is the database thread.
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  const isMain = (f: string) => f.split('.').at(-3) === '0';
  for (const file of [...files].sort((a, b) => Number(isMain(b)) - Number(isMain(a))))
    summarise(path.join(dir, file), profiled, isMain(file) ? null : pgliteFunctionNames());
  console.log(`\nprofiles: ${dir}`);
} finally {
  await stop(gateway.child);
  await stop(upstream.child);
  await db.cleanup();
}
