/**
 * Rate limits, as gates and API keys both have them: requests and tokens per minute over a
 * sliding window of 60 seconds. Null is no limit.
 */
import { z } from 'zod';

export const RATE_LIMITS = {
  /** Requests per minute: a million is ~17,000 a second, more than any one gate serves. */
  rateLimitRpm: 1_000_000,
  /** Tokens per minute: a billion, within a 32-bit integer (a GraphQL Int). */
  rateLimitTpm: 1_000_000_000,
} as const;

const perMinute = (unit: string, max: number) =>
  z
    .number(`must be a whole number of ${unit} per minute, or null for no limit`)
    .int(`must be a whole number of ${unit} per minute`)
    .min(1, `must be at least 1 ${unit.replace(/s$/, '')} per minute (null for no limit)`)
    .max(max, `must be at most ${max.toLocaleString('en-US')} ${unit} per minute`)
    .nullable();

export const rateLimitFieldSchemas = {
  rateLimitRpm: perMinute('requests', RATE_LIMITS.rateLimitRpm),
  rateLimitTpm: perMinute('tokens', RATE_LIMITS.rateLimitTpm),
};

export type RateLimitSettings = { rateLimitRpm: number | null; rateLimitTpm: number | null };
