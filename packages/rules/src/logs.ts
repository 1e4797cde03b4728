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
