/**
 * Which log entries a reader asks for: the filter the log list, its export, the overview and the
 * series share, and the SQL conditions it makes. Every condition is scoped to the entries' owner.
 */

import { sessionKeySchema } from '@gatehouse/rules/agent';
import { dateTimeSchema } from '@gatehouse/rules/dates';
import {
  endUserSchema,
  FAILURE_CLASS_CODES,
  FAILURE_CLASSES,
  type FailureClass,
  LOG_STATUSES,
} from '@gatehouse/rules/logs';
import { z } from 'zod';
import { tsqueryOf } from './searchWords.ts';

const quoted = (codes: readonly string[]) => codes.map((c) => `'${c}'`).join(', ');

/** A row's failure class in SQL: the same rule as failureClassOf in @gatehouse/rules/logs. */
export const FAILURE_CLASS_SQL = `(CASE WHEN success THEN NULL
  ${Object.entries(FAILURE_CLASS_CODES)
    .map(([cls, codes]) => `WHEN error_code IN (${quoted(codes)}) THEN '${cls}'`)
    .join('\n  ')}
  WHEN status_code = 402 THEN 'limit_refusal'
  WHEN status_code = 429 THEN 'rate_limit'
  WHEN status_code >= 500 OR status_code < 400 THEN 'provider_error'
  ELSE 'client_error' END)`;

/** A yes/no filter in a query string: `true` or `false`, nothing else. */
const yesNo = z
  .enum(['true', 'false'], 'must be true or false')
  .transform((v) => v === 'true')
  .optional();

/** The longest text search, and the most characters of an entry the search index keeps. */
export const SEARCH_QUERY_MAX = 200;

/** The filter's fields, for the query schemas that take them (each adds its own). */
export const logFilterFields = {
  gateId: z.uuid('must be a gate UUID').optional(),
  status: z.enum(LOG_STATUSES).optional(),
  // The client's session id (x-gatehouse-session-id), on any gate.
  sessionId: sessionKeySchema.optional(),
  // The API key the request came with, and the end user it named.
  apiKeyId: z.uuid('must be an API key UUID').optional(),
  endUser: endUserSchema.optional(),
  // The model named or the one that answered.
  model: z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters').optional(),
  errorCode: z.string().min(1, 'must not be empty').max(100, 'must be at most 100 characters').optional(),
  failureClass: z.enum(FAILURE_CLASSES).optional(),
  // The route the request came to (/v1/chat/completions, /v3/chat, …).
  endpoint: z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters').optional(),
  streamed: yesNo,
  hasToolCalls: yesNo,
  // A metadata member sent with the request: the key alone (present with any value), or key and value.
  metadataKey: z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters').optional(),
  metadataValue: z.string().max(1000, 'must be at most 1000 characters').optional(),
  // Words of the prompt, the answer or the error (web-search syntax: "a phrase", -not, or).
  q: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(SEARCH_QUERY_MAX, `must be at most ${SEARCH_QUERY_MAX} characters`)
    .optional(),
  since: dateTimeSchema.optional(),
  until: dateTimeSchema.optional(),
};

export type LogFilter = {
  gateId?: string | undefined;
  status?: (typeof LOG_STATUSES)[number] | undefined;
  sessionId?: string | undefined;
  apiKeyId?: string | undefined;
  endUser?: string | undefined;
  model?: string | undefined;
  errorCode?: string | undefined;
  failureClass?: FailureClass | undefined;
  endpoint?: string | undefined;
  streamed?: boolean | undefined;
  hasToolCalls?: boolean | undefined;
  metadataKey?: string | undefined;
  metadataValue?: string | undefined;
  q?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
};

export const sinceBeforeUntil = (q: { since?: Date | undefined; until?: Date | undefined }) =>
  !q.since || !q.until || q.since < q.until;
export const untilIssue = { path: ['until'], message: 'must be after since' };

/** A metadata value is looked for under a key: metadataValue alone is refused. */
export const valueHasKey = (q: { metadataKey?: string | undefined; metadataValue?: string | undefined }) =>
  q.metadataValue === undefined || q.metadataKey !== undefined;
export const valueIssue = { path: ['metadataValue'], message: 'needs metadataKey' };

/** The filter's schema with its refinements (and any fields of the caller's own). */
export function logFilterSchema<T extends z.ZodRawShape>(extra: T) {
  return z
    .strictObject({ ...extra, ...logFilterFields })
    .refine((q) => sinceBeforeUntil(q as LogFilter), untilIssue)
    .refine((q) => valueHasKey(q as LogFilter), valueIssue);
}

/**
 * The SQL conditions of a filter over log_entries, owner first ($1), and their values; `add`
 * appends a condition of the caller's own (a cursor) with its value.
 */
export function logConditions(userId: string, f: LogFilter) {
  const params: unknown[] = [userId];
  const where = ['user_id = $1::uuid'];
  const add = (clause: (placeholder: string) => string, value: unknown) => {
    params.push(value);
    where.push(clause(`$${params.length}`));
  };
  if (f.gateId) add((p) => `gate_id = ${p}::uuid`, f.gateId);
  if (f.status) add((p) => `success = ${p}`, f.status === 'success');
  if (f.sessionId) add((p) => `session_id = ${p}`, f.sessionId);
  if (f.apiKeyId) add((p) => `api_key_id = ${p}::uuid`, f.apiKeyId);
  if (f.endUser) add((p) => `end_user = ${p}`, f.endUser);
  if (f.model) add((p) => `(model_used = ${p} OR model_requested = ${p})`, f.model);
  if (f.errorCode) add((p) => `error_code = ${p}`, f.errorCode);
  // A success has no class; saying so lets the planner read only the failures (the index on
  // user_id, success, created_at) instead of every entry.
  if (f.failureClass) add((p) => `NOT success AND ${FAILURE_CLASS_SQL} = ${p}`, f.failureClass);
  if (f.endpoint) add((p) => `endpoint = ${p}`, f.endpoint);
  if (f.streamed !== undefined) add((p) => `stream = ${p}`, f.streamed);
  if (f.hasToolCalls !== undefined) {
    // The writer stores tool_calls only when the answer had some; JSON null and [] count as none.
    add(
      (p) => `(tool_calls IS NOT NULL AND tool_calls NOT IN ('null'::jsonb, '[]'::jsonb)) = ${p}`,
      f.hasToolCalls,
    );
  }
  if (f.metadataKey !== undefined && f.metadataValue !== undefined) {
    // The member's value as text: "3" finds 3 and "3", "true" finds true.
    params.push(f.metadataKey);
    const key = `$${params.length}`;
    add((p) => `metadata ->> ${key}::text = ${p}`, f.metadataValue);
  } else if (f.metadataKey !== undefined) {
    add((p) => `jsonb_typeof(metadata) = 'object' AND metadata ? ${p}::text`, f.metadataKey);
  }
  // The words, cut as the writer cut the entries' (searchWords.ts), against its GIN-indexed tsvector;
  // a search with no word in it finds nothing.
  if (f.q) {
    const words = tsqueryOf(f.q);
    if (words === null) where.push('false');
    else add((p) => `search @@ ${p}::tsquery`, words);
  }
  if (f.since) add((p) => `created_at >= ${p}::timestamptz`, f.since.toISOString());
  if (f.until) add((p) => `created_at < ${p}::timestamptz`, f.until.toISOString());
  return { where, params, add };
}
