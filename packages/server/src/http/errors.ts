import type { Context } from 'hono';
import { DomainError, HTTP_STATUS, ValidationError } from '../domain/errors.ts';

export function errorBody(code: string, message: string, details?: Record<string, unknown>) {
  return { error: { code, message, ...(details && { details }) } };
}

/** The native error body for any thrown value; only the unexpected ones become a masked 500. */
export function errorResponse(c: Context, error: unknown) {
  if (error instanceof DomainError) {
    return c.json(errorBody(error.code, error.message, error.details), HTTP_STATUS[error.code]);
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
