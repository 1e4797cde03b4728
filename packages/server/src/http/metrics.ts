import { timingSafeEqual } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Context } from 'hono';
import { UnauthorizedError } from '../domain/errors.ts';
import { readCounter, readGauge, registry } from '../observability/metrics.ts';
import type { Runtime } from '../runtime.ts';

const LOOP_WINDOW_MS = 60_000;
/**
 * How late the request thread's event loop ran, over the last whole minute (a minute's window
 * rather than since start, so a slow start-up or an old incident does not hide today's figure).
 */
const LOOP_RESOLUTION_MS = 10;
const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
loopDelay.enable();
let lastMinute = { p99: 0, max: 0 };
// The histogram counts nanoseconds from one 10 ms sample to the next: the delay is beyond that.
const lateSeconds = (ns: number) => Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS) / 1000;
setInterval(() => {
  lastMinute = { p99: lateSeconds(loopDelay.percentile(99)), max: lateSeconds(loopDelay.max) };
  loopDelay.reset();
}, LOOP_WINDOW_MS).unref();

// The log writer's figures, read from it when /metrics is asked. Counts only, nothing about any account.
const logFigures = {
  written: readCounter('gatehouse_log_entries_written_total', 'Log entries written to the database.'),
  sanitized: readCounter(
    'gatehouse_log_entries_sanitized_total',
    'Log entries stored with U+FFFD in place of NUL or unpaired surrogates.',
  ),
  payloadDropped: readCounter(
    'gatehouse_log_entries_payload_dropped_total',
    'Log entries stored without their payload (provider request and response, metadata, tool calls and results), which could not be encoded as JSON.',
  ),
  refused: readCounter(
    'gatehouse_log_entries_refused_total',
    'Log entries not stored: refused by the database alone and after a retry, or not encodable even without their payload.',
  ),
  queued: readGauge('gatehouse_log_entries_queued', 'Log entries waiting to be written.'),
  lag: readGauge(
    'gatehouse_log_queue_lag_seconds',
    'How long the oldest log entry waiting to be written has waited; 0 when none waits.',
  ),
  writeFailures: readCounter(
    'gatehouse_log_write_failures_total',
    'Batches of log entries the database did not take, by why: disk_full (no room; the batch is split and retried, its entries wait in the queue), unavailable (retried whole), bad_entry (split until the entry at fault is refused alone).',
    ['reason'],
  ),
  waitingForDisk: readGauge(
    'gatehouse_log_entries_waiting_for_disk',
    'Log entries waiting in memory while the database refuses them for want of disk space; 0 when it does not.',
  ),
  mediaBytes: readGauge(
    'gatehouse_log_queued_media_bytes',
    "Bytes of answer files (images, audio, video) held with the log entries waiting to be written; past the queue's limit (64 MiB by default), requests wait for it.",
  ),
};
const loopP99 = readGauge(
  'gatehouse_event_loop_delay_p99_seconds',
  "The 99th percentile of the request thread's event-loop delay over the last whole minute.",
);
const loopMax = readGauge(
  'gatehouse_event_loop_delay_max_seconds',
  'The longest event-loop delay of the request thread over the last whole minute.',
);

/** The process's metrics in Prometheus' text format, the log writer's read as they are now. */
export async function metricsText(runtime: Runtime): Promise<string> {
  const logs = runtime.logs.stats();
  logFigures.written.set(logs.written);
  logFigures.sanitized.set(logs.sanitized);
  logFigures.payloadDropped.set(logs.payloadDropped);
  logFigures.refused.set(logs.refused);
  logFigures.queued.set(logs.queued);
  logFigures.lag.set(logs.lagSeconds);
  logFigures.writeFailures.set(Object.entries(logs.writeFailures).map(([reason, n]) => [{ reason }, n]));
  logFigures.waitingForDisk.set(logs.waitingForDisk);
  logFigures.mediaBytes.set(logs.mediaBytes);
  loopP99.set(lastMinute.p99);
  loopMax.set(lastMinute.max);
  return registry.metrics();
}

const sameSecret = (given: string, expected: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/**
 * GET /metrics: open, or with GATEHOUSE_METRICS_TOKEN set, only to `Authorization: Bearer <token>`
 * (a 401 in the native error shape otherwise).
 */
export function metricsRoute(runtime: Runtime, token: string | undefined) {
  return async (c: Context) => {
    if (token !== undefined) {
      const given = /^Bearer (.+)$/i.exec(c.req.header('authorization') ?? '')?.[1] ?? '';
      if (!sameSecret(given, token))
        throw new UnauthorizedError(
          'GET /metrics needs the metrics token (GATEHOUSE_METRICS_TOKEN) as a Bearer token',
        );
    }
    return c.text(await metricsText(runtime), 200, { 'content-type': registry.contentType });
  };
}
