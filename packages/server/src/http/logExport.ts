/**
 * The log export's two formats, written a page at a time: CSV (RFC 4180: a field with a comma, a
 * quote or a line break is quoted, its quotes doubled; a text cell a spreadsheet would run as a
 * formula, one starting with = + - @ or a tab or carriage return, gets a leading apostrophe, as
 * OWASP's CSV-injection advice has it) and JSON Lines (one entry, as GET /v1/logs lists it with
 * its metadata, per line). Small enough to keep here rather than add a CSV library for it.
 */
import type { ExportedEntry, ExportFormat } from '../domain/logs.ts';
import { logEntryView } from './views.ts';

/** The CSV's columns, in order, and what each cell holds. */
const CSV_COLUMNS: [string, (e: ExportedEntry) => unknown][] = [
  ['id', (e) => e.id],
  ['created_at', (e) => e.createdAt.toISOString()],
  ['gate_id', (e) => e.gateId],
  ['gate_name', (e) => e.gateName],
  ['endpoint', (e) => e.endpoint],
  ['model_requested', (e) => e.modelRequested],
  ['model_used', (e) => e.modelUsed],
  ['success', (e) => e.success],
  ['status_code', (e) => e.statusCode],
  ['error_code', (e) => e.errorCode],
  ['error_message', (e) => e.errorMessage],
  ['prompt_tokens', (e) => e.promptTokens],
  ['completion_tokens', (e) => e.completionTokens],
  ['total_tokens', (e) => e.totalTokens],
  ['cost_usd', (e) => e.costUsd],
  ['latency_ms', (e) => e.latencyMs],
  ['stream', (e) => e.stream],
  ['session_id', (e) => e.sessionId],
  ['end_user', (e) => e.endUser],
  ['api_key_id', (e) => e.apiKeyId],
  ['api_key_name', (e) => e.apiKeyName],
  ['tool_calls', (e) => (e.toolCalls == null ? null : JSON.stringify(e.toolCalls))],
  ['metadata', (e) => (e.metadata == null ? null : JSON.stringify(e.metadata))],
];

/** One CSV cell: numbers and booleans as they are, text guarded against formulas and quoted when it must be. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const CRLF = '\r\n';

export const csvHeader = () => CSV_COLUMNS.map(([name]) => name).join(',') + CRLF;

export function csvRows(entries: ExportedEntry[]): string {
  let out = '';
  for (const e of entries) out += CSV_COLUMNS.map(([, cell]) => csvCell(cell(e))).join(',') + CRLF;
  return out;
}

export function jsonLines(entries: ExportedEntry[]): string {
  let out = '';
  for (const e of entries) out += `${JSON.stringify({ ...logEntryView(e), metadata: e.metadata })}\n`;
  return out;
}

export const EXPORT_CONTENT_TYPE: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/x-ndjson; charset=utf-8',
};

/** The download's file name: the time it was made, to the second, in UTC. */
export const exportFileName = (format: ExportFormat, now = new Date()) =>
  `gatehouse-logs-${now.toISOString().slice(0, 19).replaceAll(':', '-')}.${format}`;
