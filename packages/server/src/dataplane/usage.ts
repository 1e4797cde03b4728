/**
 * A provider's usage figures, checked before they become money. A provider is a party to the
 * bill, not a trusted source: a negative count would take spending back under a limit, NaN,
 * Infinity or 2e16 tokens would make a cost no column can hold. Every figure an answer is
 * charged by passes through countOf (the task types' price() call it); an answer with one that
 * fails is charged its worst case instead (the pipeline decides, in one place).
 */
import type { Usage } from '../providers/types.ts';

/** The kinds of unit providers bill by. */
export type UsageUnit = 'tokens' | 'characters' | 'seconds' | 'images' | 'pages';

/**
 * The most one answer may report of each unit; a figure beyond it is not believed. Ten times
 * the largest context window offered (10M tokens), days of audio or video, more images and pages
 * than any API makes or reads in one call. Within these every cost fits its column many times over.
 */
export const USAGE_MAX: Record<UsageUnit, number> = {
  tokens: 100_000_000,
  characters: 100_000_000,
  seconds: 1_000_000,
  images: 10_000,
  pages: 100_000,
};

/**
 * The most dollars a money column (numeric(18, 8): ten digits before the point) can hold, whole
 * dollars so that the double stays below the column's bound. Costs and counters are clamped to it.
 */
export const MAX_USD = 9_999_999_999;

/** The most an integer column holds: the token counters are clamped to it. */
export const MAX_INT = 2_147_483_647;

/** A figure of an answer that fails the checks. */
export class InvalidUsage extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid usage: ${problems.join('; ')}`);
    this.name = 'InvalidUsage';
  }
}

const shown = (value: unknown) =>
  typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? 'undefined');

/** Why `value` is no count of `unit`, or null when it is one. */
function problemOf(name: string, unit: UsageUnit, value: unknown): string | null {
  if (typeof value !== 'number') return `${name}: ${shown(value)} is not a number`;
  if (!Number.isFinite(value)) return `${name}: ${value} is not a count`;
  if (value < 0) return `${name}: ${value} is negative`;
  if (value > USAGE_MAX[unit]) {
    return `${name}: ${value} is more than the ${USAGE_MAX[unit]} ${unit} one answer may bill`;
  }
  return null;
}

/** Usage's fields as the note names them. */
const TOKEN_FIGURES: Record<keyof Usage, string> = {
  promptTokens: 'prompt tokens',
  completionTokens: 'completion tokens',
  cachedTokens: 'cached tokens',
  cacheWriteTokens: 'cache-write tokens',
  reasoningTokens: 'reasoning tokens',
};

/**
 * `value` as a count of `unit`: whole units (all but seconds) rounded up, since a fraction of a
 * token is billed as one. Throws InvalidUsage when it is none.
 */
export function countOf(name: string, unit: UsageUnit, value: unknown): number {
  const problem = problemOf(name, unit, value);
  if (problem) throw new InvalidUsage([problem]);
  return unit === 'seconds' ? (value as number) : Math.ceil(value as number);
}

/** Token usage as reported, each figure checked (all problems named at once). */
export function checkedUsage(usage: Usage): Usage {
  const figures: [keyof Usage, unknown][] = Object.entries(usage) as never;
  const problems = figures
    .filter(([, v]) => v !== undefined)
    .map(([name, v]) => problemOf(TOKEN_FIGURES[name] ?? name, 'tokens', v))
    .filter((p): p is string => p !== null);
  if (problems.length > 0) throw new InvalidUsage(problems);
  const out = { ...usage };
  for (const [name, v] of figures) if (v !== undefined) out[name] = Math.ceil(v as number);
  return out;
}

/** A cost as recorded: never negative, never NaN, never beyond what its column holds. */
export function recordableUsd(usd: number): number {
  if (!Number.isFinite(usd) || usd < 0) return usd === Number.POSITIVE_INFINITY ? MAX_USD : 0;
  return Math.min(usd, MAX_USD);
}

/**
 * What a ledger settles a reservation of `reservedUsd` with: the cost where it is one, the
 * reservation (the worst case) where it is not, so that no bad figure leaves a reservation held
 * or a counter unwritable.
 */
export function settledUsd(actual: number, reservedUsd: number): number {
  return Number.isFinite(actual) && actual >= 0 ? Math.min(actual, MAX_USD) : reservedUsd;
}

/**
 * A settlement that charges more than its hold (a provider billing past the cap it was sent,
 * failed attempts charged): the answer waits for it, so none leaves with a counter below what was
 * spent. One that gives back part of its hold is written behind the answer (groupCommit.ts).
 */
export const chargesMore = (actual: number, reservedUsd: number): boolean =>
  settledUsd(actual, reservedUsd) > reservedUsd;

/** The note an entry carries when its answer's usage was not believed. */
export function invalidUsageNote(error: InvalidUsage, chargedUsd: number): string {
  return `The provider reported invalid usage (${error.problems.join('; ')}); charged the worst case, $${chargedUsd.toFixed(8)}`;
}
