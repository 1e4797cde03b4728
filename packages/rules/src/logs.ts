/** The log's choices that the server's filters and the dashboard's log page share. */
import { z } from 'zod';
import { isStorableText, STORABLE_TEXT_MESSAGE } from './storable.ts';

/** A log entry's outcome, as the log filter names it: `success` or `failed`. */
export const LOG_STATUSES = ['success', 'failed'] as const;
export type LogStatus = (typeof LOG_STATUSES)[number];

/** The header that names a request's end user on any data-plane route (it wins over the body). */
export const END_USER_HEADER = 'x-gatehouse-user';
export const END_USER_MAX_LENGTH = 256;

/** An end user as a request names it and the log filter takes it: 1 to 256 characters. */
export const endUserSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(END_USER_MAX_LENGTH, `must be at most ${END_USER_MAX_LENGTH} characters`)
  .refine(isStorableText, STORABLE_TEXT_MESSAGE);

/**
 * Why a request failed, as the log filter and the overview split failures: the provider (or the
 * network to it) failed, a spending limit refused it, a rate limit did, or the client sent what
 * could not be served.
 */
export const FAILURE_CLASSES = ['provider_error', 'limit_refusal', 'rate_limit', 'client_error'] as const;
export type FailureClass = (typeof FAILURE_CLASSES)[number];

/** The error codes of each class but the client's, which holds every other failure below 500. */
export const FAILURE_CLASS_CODES = {
  provider_error: ['upstream_error', 'upstream_timeout', 'service_unavailable'],
  // Budgets fail closed: a limit that cannot be checked (Redis away) refuses like one reached.
  limit_refusal: [
    'spending_limit_exceeded',
    'key_spending_limit',
    'session_budget_exceeded',
    'spending_unavailable',
  ],
  rate_limit: ['rate_limited'],
} as const satisfies Record<Exclude<FailureClass, 'client_error'>, readonly string[]>;

/** A logged failure's class (null for a success): by its code, else by its status. */
export function failureClassOf(entry: {
  success: boolean;
  statusCode: number;
  errorCode: string | null;
}): FailureClass | null {
  if (entry.success) return null;
  for (const [cls, codes] of Object.entries(FAILURE_CLASS_CODES)) {
    if ((codes as readonly string[]).includes(entry.errorCode ?? '')) return cls as FailureClass;
  }
  if (entry.statusCode === 402) return 'limit_refusal';
  if (entry.statusCode === 429) return 'rate_limit';
  return entry.statusCode >= 500 || entry.statusCode < 400 ? 'provider_error' : 'client_error';
}
