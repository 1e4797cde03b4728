/**
 * The rules of agent gates beyond the gate's own fields (those are in gate.ts): session ids,
 * session statuses, and sub-gates with their roles. Shared by the server and the dashboard.
 */
import { z } from 'zod';
import { LIMITS, visibleToolsSchema } from './gate.ts';
import { type FieldIssue, issuesFromZod } from './issues.ts';
import { isStorableText, STORABLE_TEXT_MESSAGE } from './storable.ts';

/**
 * What a session row stores; `idle` and `failing` are computed on read and never stored: an active
 * session is idle once its gate's idle minutes pass without a request, else failing while its
 * latest request failed or was refused.
 */
export const STORED_SESSION_STATUSES = ['active', 'completed', 'runaway', 'budget_exceeded'] as const;
export const SESSION_STATUSES = [
  'active',
  'idle',
  'failing',
  'completed',
  'runaway',
  'budget_exceeded',
] as const;
export type StoredSessionStatus = (typeof STORED_SESSION_STATUSES)[number];
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** A client's session id: 1–128 printable ASCII characters (space included). */
export const SESSION_KEY_PATTERN = /^[\x20-\x7e]{1,128}$/;
export const SESSION_KEY_MESSAGE = 'must be 1 to 128 printable ASCII characters';
export const isSessionKey = (value: unknown): value is string =>
  typeof value === 'string' && SESSION_KEY_PATTERN.test(value);
export const sessionKeySchema = z.string().regex(SESSION_KEY_PATTERN, SESSION_KEY_MESSAGE);

/** A sub-gate's role within its agent gate: what `x-gatehouse-action` names. */
export const SUB_GATE_ROLE_PATTERN = /^[a-z0-9_-]{1,64}$/;
export const SUB_GATE_ROLE_MESSAGE = 'must be 1 to 64 characters of a-z, 0-9, _ and -';

export const subGateInputSchema = z.strictObject({
  subGateId: z.uuid('must be a gate UUID'),
  role: z.string().regex(SUB_GATE_ROLE_PATTERN, SUB_GATE_ROLE_MESSAGE),
  description: z
    .string()
    .max(LIMITS.descriptionLength)
    .refine(isStorableText, STORABLE_TEXT_MESSAGE)
    .nullable()
    .optional(),
  visibleTools: visibleToolsSchema.optional(),
});
export type SubGateInput = z.infer<typeof subGateInputSchema>;

/** Parses an attach body; an unknown field is refused by name rather than ignored. */
export function parseSubGateInput(
  raw: unknown,
): { ok: true; value: SubGateInput } | { ok: false; issues: FieldIssue[] } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, issues: [{ path: '', message: 'body must be a JSON object' }] };
  }
  const issues: FieldIssue[] = Object.keys(raw)
    .filter((key) => !(key in subGateInputSchema.shape))
    .map((key) => ({ path: key, message: 'is not a sub-gate field' }));
  const result = subGateInputSchema.safeParse(raw);
  if (!result.success) {
    const named = new Set(issues.map((i) => i.path));
    issues.push(
      ...issuesFromZod(result.error).filter(
        (i) => !named.has(i.path) && (i.path !== '' || issues.length === 0),
      ),
    );
  }
  if (issues.length > 0 || !result.success) return { ok: false, issues };
  return { ok: true, value: result.data };
}
