import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { DomainError, type ErrorCode, ValidationError } from '../domain/errors.ts';

export const STATUS_OF: Record<ErrorCode, ContentfulStatusCode> = {
  invalid_request: 400,
  unauthorized: 401,
  spending_limit_exceeded: 402,
  forbidden: 403,
  plan_limit_reached: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  upstream_error: 502,
  upstream_timeout: 504,
};

export function errorBody(code: string, message: string, details?: Record<string, unknown>) {
  return { error: { code, message, ...(details && { details }) } };
}

/** The native error body for any thrown value; only the unexpected ones become a masked 500. */
export function errorResponse(c: Context, error: unknown) {
  if (error instanceof DomainError) {
    return c.json(errorBody(error.code, error.message, error.details), STATUS_OF[error.code]);
  }
  console.error('Unexpected error on', c.req.method, c.req.path, error);
  return c.json(errorBody('internal_error', 'Something went wrong on our side'), 500);
}

/** The request body as JSON, or a 400 that says what is wrong with it. */
export async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') throw new ValidationError([{ path: '', message: 'request body is required' }]);
  try {
    return JSON.parse(text);
  } catch {
    throw new ValidationError([{ path: '', message: 'request body is not valid JSON' }]);
  }
}
