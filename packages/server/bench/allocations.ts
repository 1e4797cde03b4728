/**
 * `pnpm --filter @gatehouse/server bench:allocations`: what the request thread allocates per request
 * under the bench's load (issue 30: "allocation per request measured … and cut until major
 * collections no longer set the p99"). What a request allocates sets how often the young
 * generation is collected: at ~1,000 req/s, ~116 kB a request meant a scavenge of ~2 ms every
 * ~115 ms on the request thread.
 *
 * It builds the server, starts the bench's upstream and the gateway with the inspector on a
 * loopback port, the bench's block-limited gate (BENCH_PROFILE_DATABASE: `pglite`, the default,
 * or `postgres`), warms up, then samples allocations (V8's sampling heap profiler, every
 * BENCH_ALLOCATION_INTERVAL bytes, objects collected since included) while wrk c1 sends requests
 * one at a time for BENCH_ALLOCATION_SECONDS (10): one request at a time, so the figure is the
 * request's own, not the batching of many. What runs beside the requests (the log writer's
 * batches, timers) is shared by fewer of them on a busy machine: ~114 kB a request on a quiet one,
 * 118-125 kB with a CI run beside it.
 *
 * It prints the bytes allocated per request by part (our bundle, each package, Node's internals,
 * V8's built-ins as `native`), by the innermost function of ours on the stack (our bundle's
 * functions, named as the build names them, with their line in dist/), and by the heaviest
 * functions (self). The profile stays in the printed file for Chrome's DevTools (Memory, "Load").
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WebSocket } from 'undici';
import {
  BLOCK_GATE,
  benchNodeArgs,
  buildServer,
  CHAT,
  ensureWrk,
  freePort,
  newDatabase,
  partOf,
  printTop,
  setUp,
  sleep,
  startGateway,
  startUpstream,
  stop,
  wrk,
  wrkRun,
} from './harness.ts';

const SECONDS = Number(process.env.BENCH_ALLOCATION_SECONDS ?? 10);
const KIND = (process.env.BENCH_PROFILE_DATABASE ?? 'pglite') as 'pglite' | 'postgres';
const TOP = Number(process.env.BENCH_PROFILE_TOP ?? 25);
const INTERVAL = Number(process.env.BENCH_ALLOCATION_INTERVAL ?? 4096);

type Frame = { functionName: string; url: string; lineNumber: number };
type HeapNode = { callFrame: Frame; selfSize: number; children: HeapNode[] };

/** A DevTools protocol session over the inspector's WebSocket: send a method, get its result. */
async function inspector(port: number) {
  const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  if (!target) throw new Error(`no inspector target on port ${port}`);
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  type Waiting = { resolve: (result: unknown) => void; reject: (error: Error) => void };
  const waiting = new Map<number, Waiting>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as {
      id?: number;
      result?: unknown;
      error?: { message: string };
    };
    const call = message.id === undefined ? undefined : waiting.get(message.id);
    if (!call) return;
    waiting.delete(message.id as number);
    if (message.error) call.reject(new Error(`the inspector refused: ${message.error.message}`));
    else call.resolve(message.result);
  });
  // The gateway gone (or the socket cut) fails what waits rather than leaving the bench hanging.
  const cut = () => {
    for (const call of waiting.values()) call.reject(new Error('the inspector connection closed'));
    waiting.clear();
  };
  socket.addEventListener('close', cut);
  socket.addEventListener('error', cut);
  let next = 1;
  return {
    send: (method: string, params: Record<string, unknown> = {}) =>
      new Promise<unknown>((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve, reject });
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}

/** Our bundle's files (dist/*.mjs), not a package's own dist/. */
const ours = (url: string) => !url.includes('/node_modules/') && /\/dist\/[^/]+\.mjs$/.test(url);
const nameOf = (f: Frame) =>
  `${f.functionName || '(anonymous)'} ${partOf(f.url, f.functionName)}:${f.lineNumber + 1}`;

function summarise(head: HeapNode, requests: number) {
  const self = new Map<string, number>();
  const parts = new Map<string, number>();
  const byOurs = new Map<string, number>();
  let total = 0;
  const walk = (node: HeapNode, innermost: string) => {
    const here = ours(node.callFrame.url) ? nameOf(node.callFrame) : innermost;
    if (node.selfSize > 0) {
      total += node.selfSize;
      const name = nameOf(node.callFrame);
      self.set(name, (self.get(name) ?? 0) + node.selfSize);
      const part = partOf(node.callFrame.url, node.callFrame.functionName);
      parts.set(part, (parts.get(part) ?? 0) + node.selfSize);
      byOurs.set(here, (byOurs.get(here) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, here);
  };
  walk(head, '(none of ours on the stack)');
  const line = (bytes: number) =>
    `${(bytes / requests / 1024).toFixed(1).padStart(6)} kB  ${((100 * bytes) / total).toFixed(1).padStart(5)} %`;
  console.log(`\n${(total / requests / 1024).toFixed(1)} kB allocated a request on the request thread`);
  printTop('by part (where the allocating function is)', parts, line, TOP);
  printTop('by the innermost function of ours on the stack', byOurs, line, TOP);
  printTop('heaviest functions (self)', self, line, TOP);
}

ensureWrk();
buildServer();
const db = await newDatabase(KIND, 'gatehouse_bench_allocations');
if (!db) process.exit(1);
let upstream: Awaited<ReturnType<typeof startUpstream>> | undefined;
let gateway: Awaited<ReturnType<typeof startGateway>> | undefined;
try {
  upstream = await startUpstream();
  const inspectPort = await freePort();
  gateway = await startGateway(db, upstream.port, 'dist/main.mjs', [
    ...benchNodeArgs,
    `--inspect=127.0.0.1:${inspectPort}`,
  ]);
  const { headers } = await setUp(gateway.base, { bench: BLOCK_GATE });
  const url = `${gateway.base}/v1/chat/completions`;
  const h = headers.bench as Record<string, string>;
  console.log(`warming up (5 s), then wrk c1 for ${SECONDS} s with allocations sampled…`);
  await wrk(url, h, CHAT, 5, 32);
  await sleep(2000);
  const session = await inspector(inspectPort);
  await session.send('HeapProfiler.startSampling', {
    samplingInterval: INTERVAL,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const { requests } = await wrkRun(url, h, CHAT, SECONDS, 1);
  const { profile } = (await session.send('HeapProfiler.stopSampling')) as { profile: { head: HeapNode } };
  session.close();
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-allocations-')), 'gateway.heapprofile');
  writeFileSync(file, JSON.stringify(profile));
  summarise(profile.head, requests);
  console.log(`\nprofile: ${file}`);
} finally {
  await stop(gateway?.child);
  await stop(upstream?.child);
  await db.cleanup();
}
