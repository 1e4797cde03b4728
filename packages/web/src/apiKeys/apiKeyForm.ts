/**
 * The keys page's forms: their values as typed (limits as text, blank for none) and the input each
 * sends, checked by the server's own rules (`@gatehouse/rules/account`) on exactly that input.
 */
import { apiKeyCreateSchema, apiKeyUpdateSchema } from '@gatehouse/rules/account';
import { issuesFromZod } from '@gatehouse/rules/issues';
import { toNestErrors } from '@hookform/resolvers';
import type { FieldError, Resolver } from 'react-hook-form';
import type { z } from 'zod';

export type ApiKeyLimitsValues = { rateLimitRpm: string; rateLimitTpm: string };
export type NewApiKey = { name: string } & ApiKeyLimitsValues;

export const noLimits: ApiKeyLimitsValues = { rateLimitRpm: '', rateLimitTpm: '' };

/** Blank is no limit; any other text is a number for the rules to judge ("ten" is NaN, refused). */
const limitOf = (text: string) => (text.trim() === '' ? null : Number(text));

export const limitsInput = (values: ApiKeyLimitsValues) => ({
  rateLimitRpm: limitOf(values.rateLimitRpm),
  rateLimitTpm: limitOf(values.rateLimitTpm),
});

export const newApiKeyInput = (values: NewApiKey) => ({ name: values.name, ...limitsInput(values) });

/** A key's limits as the form shows them. */
export const limitsToForm = (key: { rateLimitRpm: number | null; rateLimitTpm: number | null }) => ({
  rateLimitRpm: key.rateLimitRpm === null ? '' : String(key.rateLimitRpm),
  rateLimitTpm: key.rateLimitTpm === null ? '' : String(key.rateLimitTpm),
});

/**
 * A resolver that checks `input(values)` with `schema`, each issue on the field it names; the
 * values pass on as typed, and the submit sends `input(values)`.
 */
function resolverOf<V extends Record<string, unknown>>(
  schema: z.ZodType,
  input: (values: V) => unknown,
): Resolver<V> {
  return (values, _context, options) => {
    const parsed = schema.safeParse(input(values));
    if (parsed.success) return { values, errors: {} };
    const errors: Record<string, FieldError> = {};
    for (const issue of issuesFromZod(parsed.error)) {
      const field = issue.path in values ? issue.path : 'root.server';
      errors[field] ??= { type: 'rules', message: issue.message };
    }
    return { values: {}, errors: toNestErrors(errors, options) };
  };
}

export const newApiKeyResolver = resolverOf<NewApiKey>(apiKeyCreateSchema, newApiKeyInput);

export const limitsResolver = resolverOf<ApiKeyLimitsValues>(apiKeyUpdateSchema, limitsInput);

/** "60 requests · 90,000 tokens a minute", or "No limit". */
export function limitsText(key: { rateLimitRpm: number | null; rateLimitTpm: number | null }): string {
  const count = new Intl.NumberFormat('en-US');
  const parts = [
    key.rateLimitRpm !== null && `${count.format(key.rateLimitRpm)} requests`,
    key.rateLimitTpm !== null && `${count.format(key.rateLimitTpm)} tokens`,
  ].filter(Boolean);
  return parts.length === 0 ? 'No limit' : `${parts.join(' · ')} a minute`;
}
