import { monitorEventLoopDelay } from 'node:perf_hooks';
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

/**
 * The process's counters in Prometheus' text format: what an operator alerts on when entries are
 * refused by the database or wait in the queue. Counts only, nothing about any account.
 */
export function metricsText(runtime: Runtime): string {
  const logs = runtime.logs.stats();
  // A value, or one sample per label set (each label's value is ours, never a client's).
  const lines: [
    name: string,
    type: 'counter' | 'gauge',
    help: string,
    value: number | [labels: Record<string, string>, value: number][],
  ][] = [
    ['gatehouse_log_entries_written_total', 'counter', 'Log entries written to the database.', logs.written],
    [
      'gatehouse_log_entries_sanitized_total',
      'counter',
      'Log entries stored with U+FFFD in place of NUL or unpaired surrogates.',
      logs.sanitized,
    ],
    [
      'gatehouse_log_entries_payload_dropped_total',
      'counter',
      'Log entries stored without their payload (provider request and response, metadata, tool calls and results), which could not be encoded as JSON.',
      logs.payloadDropped,
    ],
    [
      'gatehouse_log_entries_refused_total',
      'counter',
      'Log entries not stored: refused by the database alone and after a retry, or not encodable even without their payload.',
      logs.refused,
    ],
    ['gatehouse_log_entries_queued', 'gauge', 'Log entries waiting to be written.', logs.queued],
    [
      'gatehouse_log_write_failures_total',
      'counter',
      'Batches of log entries the database did not take, by why: disk_full (no room; the batch is split and retried, its entries wait in the queue), unavailable (retried whole), bad_entry (split until the entry at fault is refused alone).',
      Object.entries(logs.writeFailures).map(([reason, n]) => [{ reason }, n]),
    ],
    [
      'gatehouse_log_entries_waiting_for_disk',
      'gauge',
      'Log entries waiting in memory while the database refuses them for want of disk space; 0 when it does not.',
      logs.waitingForDisk,
    ],
    [
      'gatehouse_log_queued_media_bytes',
      'gauge',
      "Bytes of answer files (images, audio, video) held with the log entries waiting to be written; past the queue's limit (64 MiB by default), requests wait for it.",
      logs.mediaBytes,
    ],
    [
      'gatehouse_event_loop_delay_p99_seconds',
      'gauge',
      "The 99th percentile of the request thread's event-loop delay over the last whole minute.",
      lastMinute.p99,
    ],
    [
      'gatehouse_event_loop_delay_max_seconds',
      'gauge',
      'The longest event-loop delay of the request thread over the last whole minute.',
      lastMinute.max,
    ],
  ];
  const samples = (name: string, value: (typeof lines)[number][3]) =>
    typeof value === 'number'
      ? `${name} ${value}\n`
      : value
          .map(([labels, n]) => {
            const set = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
            return `${name}{${set.join(',')}} ${n}\n`;
          })
          .join('');
  return lines
    .map(
      ([name, type, help, value]) =>
        `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${samples(name, value)}`,
    )
    .join('');
}
