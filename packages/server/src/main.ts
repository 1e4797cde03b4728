import type { ServerOptions } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { serve } from '@hono/node-server';
import { createApp } from './app.ts';
import { loadConfig } from './config.ts';
import { startChangeFeed, stopChangeFeed } from './db/changes.ts';
import { connectDatabase } from './db/client.ts';
import { closeRedis, openRedis } from './db/redis.ts';
import { scheduleArchitect } from './domain/architectJobs.ts';
import { setHotCacheTtl } from './domain/hotCache.ts';
import { scheduleRetention } from './domain/retention.ts';
import { answerClientError } from './http/errors.ts';
import { useJsonProcessLog } from './observability/processLog.ts';
import { startTracing } from './observability/tracing.ts';
import { createRuntime } from './runtime.ts';

// V8 lets the old generation grow to several times what survived the last full collection before
// collecting again; under load the garbage promoted from each request piles up to ~500 MB on a
// live heap of ~45 MB. Growing it by its own size instead keeps the peak under issue 30's 450 MB
// while full collections, pauses of several ms, stay rare enough to leave the p99 alone. Measured
// (PGlite, two interleaved rounds each, wrk c32 for 30 s, then an open loop at ~20 % of the
// machine's capacity): growing by 20 % (this flag's value before) p99 12.4 / 16.8 ms, 50 % 6.7 /
// 9.4 ms at a 348-369 MB peak, 100 % 6.0 / 6.7 ms at 393-400 MB and ~15 % less CPU a request,
// V8's own 5.8 / 8.6 ms at 425-481 MB. Set here rather than on the command line so every way of
// starting the server has it, unless node was started with the flag
// (`node --heap-growing-percent=0 dist/main.mjs` is V8's own growth; NODE_OPTIONS cannot carry it).
// V8 reads `_` and `-` in a flag's name alike.
if (!process.execArgv.some((arg) => arg.replaceAll('_', '-').startsWith('--heap-growing-percent')))
  setFlagsFromString('--heap-growing-percent=100');

// WebAssembly (PGlite's PostgreSQL on its thread, Prisma's query compiler here) starts in V8's
// baseline compiler and a function is compiled again by the optimising one once it has run a
// budget of code; that compiler's memory stays with glibc afterwards. Ten times Node 20's budget
// (1.4 times Node 24's) leaves the functions run only while warming up on the baseline tier:
// measured on Node 20, PGlite RSS once ready ~10 MB lower and the peak under load steadier
// (330–334 MB in four rounds, 315–355 before), and the log pages, overview, series and Architect
// reads as fast (bench:logs).
setFlagsFromString('--wasm-tiering-budget=18000000');

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}

// GATEHOUSE_OPTIMIZE_WASM=0: only the first function of each WebAssembly module may be optimised
// (V8 has no switch that the running process can still turn, but this filter), so PostgreSQL and
// Prisma's compiler stay on the baseline tier. (A new data directory's installer process always
// runs so: pgliteThread.ts.)
if (!config.optimizeWasm) setFlagsFromString('--wasm-tier-up-filter=0');

if (config.observability.logFormat === 'json') useJsonProcessLog();
// The OpenTelemetry SDK is loaded only when traces are asked for (OTEL_EXPORTER_OTLP_ENDPOINT).
const tracing = config.observability.tracing
  ? await startTracing(config.observability.tracing.protocol)
  : null;

const db = await connectDatabase(config);
if (config.redisUrl) await openRedis(config.redisUrl);
setHotCacheTtl(config.cacheTtlMs);
// Before the first request: every change another process makes from now on drops our copy.
await startChangeFeed(config);
const runtime = createRuntime(config);
let draining = false;
const app = createApp(config, runtime, { draining: () => draining });
const retention = scheduleRetention();
// GATEHOUSE_ARCHITECT_INTERVAL_MS=0: no scheduled re-analysis in this process.
const architect =
  config.architect.intervalMs > 0
    ? scheduleArchitect({ ...runtime.architect, spending: runtime.spending }, config.architect.intervalMs)
    : null;
const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs } = config.http;
const serverOptions: ServerOptions = {
  headersTimeout: headersTimeoutMs,
  // The whole request, headers and body; the clock stops once it has arrived, so it never cuts
  // an answer, streamed or not, however long it takes.
  requestTimeout: requestTimeoutMs,
  // Longer than the idle timeout of common load balancers and client pools, so a kept-alive
  // connection is never closed by us just as a client reuses it.
  keepAliveTimeout: keepAliveTimeoutMs,
  // Node looks for expired requests this often (30 s by default): a fraction of the shortest
  // timeout, so neither is overrun by more than that.
  connectionsCheckingInterval: Math.min(5_000, Math.max(50, Math.floor(headersTimeoutMs / 4))),
};
const listen = { fetch: app.fetch, port: config.port, hostname: config.host, serverOptions };
const server = serve(listen, (info) => {
  const url = `http://${info.address === '0.0.0.0' || info.address === '::' ? 'localhost' : info.address}:${info.port}`;
  const where = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}`;
  console.log(`Gatehouse is listening on ${url}  (database: ${where})`);
  console.log(`Open ${url} to sign in; the first visitor creates the admin account.`);
});
// Requests Node refuses before any route sees them (timed out, headers too large, not HTTP) are
// answered in the native error shape instead of Node's empty one.
server.on('clientError', answerClientError);

async function shutdown(signal: string) {
  if (draining) return;
  // First of all: /readyz answers 503, so a load balancer stops sending requests here.
  draining = true;
  console.log(
    `${signal} received: /readyz answers 503; finishing the requests in flight (up to ${config.drainSeconds} s), then closing`,
  );
  const http = server as import('node:http').Server;
  // Each answer from now on closes its connection, so no client reuses one that is about to go.
  http.prependListener('request', (_req, res) => {
    res.shouldKeepAlive = false;
  });
  // Stop accepting (idle connections close now), let the requests in flight (streams included)
  // finish so they are answered, logged and settled, then cut whatever is left.
  await new Promise<void>((resolve) => {
    const deadline = setTimeout(() => {
      console.error(`drain: requests still in flight after ${config.drainSeconds} s are cut`);
      http.closeAllConnections();
    }, config.drainSeconds * 1000);
    http.close(() => {
      clearTimeout(deadline);
      resolve();
    });
    http.closeIdleConnections();
  });
  await retention.stop();
  await architect?.stop();
  // Queued log entries and spending are written before the database closes.
  await runtime.close();
  await stopChangeFeed();
  await closeRedis();
  await db.close();
  await tracing?.shutdown().catch((error) => console.error('tracing: could not send the last spans', error));
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
