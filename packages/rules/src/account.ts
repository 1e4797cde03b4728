/** Rules for accounts and API keys, shared by the API and the dashboard's forms. */
import { z } from 'zod';
import { dateTimeSchema } from './dates.ts';
import { gateFieldSchemas, SPENDING_PERIODS, TASK_TYPES } from './gate.ts';
import { boundedMetadata } from './jsonLimits.ts';
import { rateLimitFieldSchemas } from './rateLimits.ts';
import {
  hasNoProtoKey,
  isStorableJson,
  isStorableText,
  PROTO_KEY_MESSAGE,
  STORABLE_TEXT_MESSAGE,
} from './storable.ts';

/** What signing in takes: any password an account may have, checked against its hash. */
export const signInSchema = z.strictObject({
  email: z
    .email('must be an email address')
    .max(254)
    .transform((e) => e.toLowerCase()),
  password: z.string().min(8, 'must be at least 8 characters').max(200, 'must be at most 200 characters'),
});

/** A new account's credentials: the first password anyone would try is not one. */
export const credentialsSchema = signInSchema.refine((c) => c.password.toLowerCase() !== c.email, {
  message: 'must not be your email address',
  path: ['password'],
});

/** A key's spending periods: a gate's, and `total`, the key's whole life (it never resets). */
export const KEY_SPENDING_PERIODS = [...SPENDING_PERIODS, 'total'] as const;
export type KeySpendingPeriod = (typeof KEY_SPENDING_PERIODS)[number];

/** The most gates one key may be scoped to (an account's gates are bounded by its plan anyway). */
export const MAX_KEY_ALLOWED_GATES = 1000;

const distinct = (items: readonly unknown[]) => new Set(items).size === items.length;

/** What a key may be given; its limits apply beside those of each gate it calls. */
export const apiKeyFieldSchemas = {
  name: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(100, 'must be at most 100 characters')
    .refine(isStorableText, STORABLE_TEXT_MESSAGE),
  ...rateLimitFieldSchemas,
  spendingLimit: gateFieldSchemas.spendingLimit,
  spendingLimitPeriod: z.enum(KEY_SPENDING_PERIODS),
  spendingEnforcement: gateFieldSchemas.spendingEnforcement,
  /** Ids of the account's own gates the key may call; empty: all of them. */
  allowedGates: z
    .array(z.uuid('must be a gate id'))
    .max(MAX_KEY_ALLOWED_GATES, `must name at most ${MAX_KEY_ALLOWED_GATES} gates`)
    .refine(distinct, 'must not name a gate twice'),
  /** The task types the key may use; empty: all of them. */
  allowedTaskTypes: z
    .array(z.enum(TASK_TYPES))
    .max(TASK_TYPES.length)
    .refine(distinct, 'must not name a task type twice'),
  /** When the key stops working (a future time), or null: never. */
  expiresAt: dateTimeSchema.refine((at) => at.getTime() > Date.now(), 'must be in the future').nullable(),
  /** The account's own notes on the key, flat as a request's metadata. */
  metadata: boundedMetadata
    .refine(hasNoProtoKey, PROTO_KEY_MESSAGE)
    .refine(isStorableJson, STORABLE_TEXT_MESSAGE),
};

export const apiKeyCreateSchema = z.strictObject(apiKeyFieldSchemas).partial().required({ name: true });
export type ApiKeyCreate = z.output<typeof apiKeyCreateSchema>;

/** A change to a key: only what is sent changes (null lifts a limit). */
export const apiKeyUpdateSchema = z
  .strictObject(apiKeyFieldSchemas)
  .partial()
  .refine((u) => Object.keys(u).length > 0, { message: 'no API key field to update' });
export type ApiKeyUpdate = z.output<typeof apiKeyUpdateSchema>;

/** How long the secret a roll replaces keeps working: up to a day; 0 ends it at once. */
export const MAX_ROLL_GRACE_SECONDS = 86_400;
export const apiKeyRollSchema = z.strictObject({
  graceSeconds: z
    .number('must be a number of seconds')
    .int('must be a whole number of seconds')
    .min(0, 'must be at least 0')
    .max(MAX_ROLL_GRACE_SECONDS, `must be at most ${MAX_ROLL_GRACE_SECONDS} (a day)`)
    .default(0),
});

/** The plans an account may be on; each one's limits are the server's (domain/plans.ts). */
export const PLAN_IDS = ['free', 'pro', 'enterprise'] as const;
export type PlanId = (typeof PLAN_IDS)[number];

/** What the admin may change on an account: its plan, and whether it is disabled. */
export const accountUpdateSchema = z
  .strictObject({
    plan: z.enum(PLAN_IDS, { error: `must be one of ${PLAN_IDS.join(', ')}` }).optional(),
    disabled: z.boolean('must be true or false').optional(),
  })
  .refine((u) => u.plan !== undefined || u.disabled !== undefined, {
    message: 'name plan or disabled (or both)',
  });
export type AccountUpdate = z.output<typeof accountUpdateSchema>;
