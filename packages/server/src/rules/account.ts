/** Rules for accounts and API keys, shared by the API and the dashboard's forms. */
import { z } from 'zod';
import { isStorableText, STORABLE_TEXT_MESSAGE } from './storable.ts';

export const credentialsSchema = z.strictObject({
  email: z
    .email('must be an email address')
    .max(254)
    .transform((e) => e.toLowerCase()),
  password: z.string().min(8, 'must be at least 8 characters').max(200, 'must be at most 200 characters'),
});

export const apiKeyCreateSchema = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(100, 'must be at most 100 characters')
    .refine(isStorableText, STORABLE_TEXT_MESSAGE),
});
