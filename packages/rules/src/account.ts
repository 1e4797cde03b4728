/** Rules for accounts and API keys, shared by the API and the dashboard's forms. */
import { z } from 'zod';
import { rateLimitFieldSchemas } from './rateLimits.ts';
import { isStorableText, STORABLE_TEXT_MESSAGE } from './storable.ts';

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

/** What a key may be given; its limits apply beside those of each gate it calls. */
export const apiKeyFieldSchemas = {
  name: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(100, 'must be at most 100 characters')
    .refine(isStorableText, STORABLE_TEXT_MESSAGE),
  ...rateLimitFieldSchemas,
};

export const apiKeyCreateSchema = z.strictObject({
  ...apiKeyFieldSchemas,
  rateLimitRpm: apiKeyFieldSchemas.rateLimitRpm.optional(),
  rateLimitTpm: apiKeyFieldSchemas.rateLimitTpm.optional(),
});

/** A change to a key: only what is sent changes (null lifts a limit). */
export const apiKeyUpdateSchema = z
  .strictObject(apiKeyFieldSchemas)
  .partial()
  .refine((u) => Object.keys(u).length > 0, { message: 'no API key field to update' });
export type ApiKeyUpdate = z.output<typeof apiKeyUpdateSchema>;

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
