import type { Runtime } from '../runtime.ts';

/**
 * The process's counters in Prometheus' text format: what an operator alerts on when entries are
 * refused by the database or wait in the queue. Counts only, nothing about any account.
 */
export function metricsText(runtime: Runtime): string {
  const logs = runtime.logs.stats();
  const lines: [name: string, type: 'counter' | 'gauge', help: string, value: number][] = [
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
  ];
  return lines
    .map(([name, type, help, value]) => `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name} ${value}\n`)
    .join('');
}
