import { type FieldIssue, issuesFromZod } from '@gatehouse/rules/issues';
import type { z } from 'zod';

export type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'key_expired'
  | 'forbidden'
  | 'key_scope'
  | 'plan_limit_reached'
  | 'not_found'
  | 'conflict'
  | 'spending_limit_exceeded'
  | 'key_spending_limit'
  | 'session_budget_exceeded'
  | 'payload_too_large'
  | 'rate_limited'
  | 'upstream_error'
  | 'service_unavailable'
  | 'spending_unavailable'
  | 'upstream_timeout';

/** The HTTP status each code answers with, wherever a status is needed (REST, logs). */
export const HTTP_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  key_expired: 401,
  spending_limit_exceeded: 402,
  key_spending_limit: 402,
  session_budget_exceeded: 402,
  forbidden: 403,
  plan_limit_reached: 403,
  key_scope: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  upstream_error: 502,
  service_unavailable: 503,
  spending_unavailable: 503,
  upstream_timeout: 504,
} as const satisfies Record<ErrorCode, number>;

/** An expected failure a user should read. REST maps `code` to a status; GraphQL to a typed result. */
export class DomainError extends Error {
  /**
   * The id of the log entry a refused or failed request left, when it left one: the answer
   * carries it (x-gatehouse-request-id) so a client's failure can be found in the log.
   */
  requestId?: string;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends DomainError {
  constructor(
    readonly issues: FieldIssue[],
    message = describeIssues(issues),
  ) {
    super('invalid_request', message, { issues });
  }
}

export class NotFoundError extends DomainError {
  constructor(resource: string) {
    super('not_found', `${resource} not found`);
  }
}

export class ConflictError extends DomainError {
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super('conflict', message, field ? { issues: [{ path: field, message }] } : undefined);
  }
}

export class PlanLimitError extends DomainError {
  constructor(
    message: string,
    readonly limit: number,
  ) {
    super('plan_limit_reached', message, { limit });
  }
}

export class ForbiddenError extends DomainError {
  constructor(message: string) {
    super('forbidden', message);
  }
}

export class UnauthorizedError extends DomainError {
  constructor(message: string) {
    super('unauthorized', message);
  }
}

/**
 * The database was too busy to finish a change in time (its transaction timed out twice, or waited
 * too long for a row another change holds): nothing was written, and the same request may simply
 * be sent again (503).
 */
export class ServiceUnavailableError extends DomainError {
  constructor(
    message = 'The server is busy and could not save this change in time; nothing was changed, try again',
  ) {
    super('service_unavailable', message);
  }
}

/** An API key past its expiresAt (401): the key stays listed, its requests are refused. */
export class KeyExpiredError extends DomainError {
  constructor(expiredAt: Date) {
    super('key_expired', `This API key expired at ${expiredAt.toISOString()}`, {
      expiredAt: expiredAt.toISOString(),
    });
  }
}

/** A gate or task type the request's API key is not allowed to use (403), named in `details`. */
export class KeyScopeError extends DomainError {
  constructor(message: string, details: { gateId: string } | { taskType: string }) {
    super('key_scope', message, details);
  }
}

/** Too many requests or attempts for a limit: the answer says when to come back (Retry-After). */
export class RateLimitedError extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    details: Record<string, unknown> = {},
  ) {
    super('rate_limited', message, { ...details, retryAfterSeconds });
  }
}

/** A disabled account's sign-in, session or API key (401): its data stays, its access does not. */
export class AccountDisabledError extends UnauthorizedError {
  constructor() {
    super('This account has been disabled; ask the admin of this Gatehouse');
  }
}

function describeIssues(issues: FieldIssue[]): string {
  if (issues.length === 0) return 'Invalid request';
  const first = issues[0] as FieldIssue;
  const where = first.path ? `${first.path}: ` : '';
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return `Invalid request: ${where}${first.message}${more}`;
}

/**
 * The same failure with its fields named as the caller named them: a GraphQL resolver passes
 * `after` and `first` where the rule reads `cursor` and `limit`. Any other error is returned as is.
 */
export function renameIssuePaths(error: unknown, names: Record<string, string>): unknown {
  if (!(error instanceof ValidationError)) return error;
  return new ValidationError(
    error.issues.map((issue) => {
      const [head = '', ...rest] = issue.path.split('.');
      const name = names[head];
      return name === undefined ? issue : { ...issue, path: [name, ...rest].join('.') };
    }),
  );
}

/** Parses with a zod schema, or throws a ValidationError naming each bad field. */
export function parseWith<T extends z.ZodType>(schema: T, raw: unknown): z.output<T> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ValidationError(issuesFromZod(parsed.error));
  return parsed.data;
}
