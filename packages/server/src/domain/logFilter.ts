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
  since?: Date | undefined;
  until?: Date | undefined;
};

export const sinceBeforeUntil = (q: { since?: Date | undefined; until?: Date | undefined }) =>
  !q.since || !q.until || q.since < q.until;
export const untilIssue = { path: ['until'], message: 'must be after since' };

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
  if (f.failureClass) add((p) => `${FAILURE_CLASS_SQL} = ${p}`, f.failureClass);
  if (f.since) add((p) => `created_at >= ${p}::timestamptz`, f.since.toISOString());
  if (f.until) add((p) => `created_at < ${p}::timestamptz`, f.until.toISOString());
  return { where, params, add };
}
