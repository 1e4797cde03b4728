/**
 * A key's spending limit, scope and expiry as its settings form holds them (numbers as text, the
 * expiry as the browser's local date-time, blank for none), the input each save sends, checked by
 * the server's own rules (`@gatehouse/rules/account`) on exactly that input, and their summaries.
 */
import { apiKeyUpdateSchema, KEY_SPENDING_PERIODS, type KeySpendingPeriod } from '@gatehouse/rules/account';
import type { EnumValue } from '@gatehouse/rules/enumValues';
import { SPENDING_ENFORCEMENTS, TASK_TYPES, type TaskType } from '@gatehouse/rules/gate';
import { issuesFromZod } from '@gatehouse/rules/issues';
import { toNestErrors } from '@hookform/resolvers';
import type { FieldError, Resolver } from 'react-hook-form';
import { fromEnum, toEnum } from '../graphqlEnums.ts';

type Enforcement = (typeof SPENDING_ENFORCEMENTS)[number];

export type KeySettingsValues = {
  spendingLimit: string;
  spendingLimitPeriod: KeySpendingPeriod;
  spendingEnforcement: Enforcement;
  allowedGates: string[];
  allowedTaskTypes: TaskType[];
  /** `YYYY-MM-DDTHH:mm` in the browser's time zone, as a datetime-local input holds it; blank: never. */
  expiresAt: string;
};

export const KEY_SETTINGS_FIELDS = [
  'spendingLimit',
  'spendingLimitPeriod',
  'spendingEnforcement',
  'allowedGates',
  'allowedTaskTypes',
  'expiresAt',
] as const;

/** A key's settings as GraphQL answers them. */
export type KeySettingsRow = {
  spendingLimit: number | null;
  spendingLimitPeriod: EnumValue<KeySpendingPeriod>;
  spendingEnforcement: EnumValue<Enforcement>;
  allowedGates: readonly string[];
  allowedTaskTypes: readonly EnumValue<TaskType>[];
  expiresAt: string | null;
};

const pad = (n: number) => String(n).padStart(2, '0');

/** A time as a datetime-local input shows it, in the browser's time zone. */
export function localDateTime(iso: string): string {
  const d = new Date(iso);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function keySettingsToForm(key: KeySettingsRow): KeySettingsValues {
  return {
    spendingLimit: key.spendingLimit === null ? '' : String(key.spendingLimit),
    spendingLimitPeriod: fromEnum(KEY_SPENDING_PERIODS, key.spendingLimitPeriod),
    spendingEnforcement: fromEnum(SPENDING_ENFORCEMENTS, key.spendingEnforcement),
    allowedGates: [...key.allowedGates],
    allowedTaskTypes: key.allowedTaskTypes.map((t) => fromEnum(TASK_TYPES, t)),
    expiresAt: key.expiresAt === null ? '' : localDateTime(key.expiresAt),
  };
}

/**
 * A checkbox group's value: react-hook-form answers a group of one checkbox with its value or
 * false rather than a list.
 */
const ticked = <T extends string>(value: readonly T[] | T | false | undefined): T[] =>
  Array.isArray(value) ? [...value] : typeof value === 'string' ? [value as T] : [];

/** What a save sends, in the rules' words: blank is none; text that is no number or time is left for the rules to refuse. */
export function keySettingsInput(values: KeySettingsValues) {
  const limit = values.spendingLimit.trim();
  const expires = values.expiresAt.trim();
  const at = new Date(expires);
  return {
    spendingLimit: limit === '' ? null : Number(limit),
    spendingLimitPeriod: values.spendingLimitPeriod,
    spendingEnforcement: values.spendingEnforcement,
    allowedGates: ticked(values.allowedGates),
    allowedTaskTypes: ticked(values.allowedTaskTypes),
    expiresAt: expires === '' ? null : Number.isNaN(at.getTime()) ? expires : at.toISOString(),
  };
}

/** The same input as GraphQL takes it: choices as enum values. */
export function keySettingsToGraphQL(values: KeySettingsValues) {
  const input = keySettingsInput(values);
  return {
    ...input,
    spendingLimitPeriod: toEnum(input.spendingLimitPeriod),
    spendingEnforcement: toEnum(input.spendingEnforcement),
    allowedTaskTypes: input.allowedTaskTypes.map((t) => toEnum(t)),
  };
}

/** Checks the input a save would send with the server's rules, each issue on the field it names. */
export const keySettingsResolver: Resolver<KeySettingsValues> = (values, _context, options) => {
  const parsed = apiKeyUpdateSchema.safeParse(keySettingsInput(values));
  if (parsed.success) return { values, errors: {} };
  const errors: Record<string, FieldError> = {};
  for (const issue of issuesFromZod(parsed.error)) {
    const head = issue.path.split('.')[0] ?? '';
    const field = (KEY_SETTINGS_FIELDS as readonly string[]).includes(head) ? head : 'root.server';
    errors[field] ??= { type: 'rules', message: issue.message };
  }
  return { values: {}, errors: toNestErrors(errors, options) };
};

const usd = (amount: number) =>
  new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 2 }).format(
    amount,
  );

const PERIOD_WORDS: Record<KeySpendingPeriod, string> = {
  daily: 'today',
  monthly: 'this month',
  total: 'in all',
};

/** "$1.25 of $5.00 this month", "$0.40 spent (no limit)". */
export function spendingText(key: {
  spendingLimit: number | null;
  spendingCurrent: number;
  spendingLimitPeriod: EnumValue<KeySpendingPeriod>;
}): string {
  const period = PERIOD_WORDS[fromEnum(KEY_SPENDING_PERIODS, key.spendingLimitPeriod)];
  if (key.spendingLimit === null) return `${usd(key.spendingCurrent)} ${period} (no limit)`;
  return `${usd(key.spendingCurrent)} of ${usd(key.spendingLimit)} ${period}`;
}

/** "All gates · all task types", or the gates' names and the task types it may use. */
export function scopeText(
  key: { allowedGates: readonly string[]; allowedTaskTypes: readonly EnumValue<TaskType>[] },
  gateNames: ReadonlyMap<string, string>,
): string {
  const gates =
    key.allowedGates.length === 0
      ? 'All gates'
      : key.allowedGates.map((id) => gateNames.get(id) ?? `gate ${id.slice(0, 8)}…`).join(', ');
  const types =
    key.allowedTaskTypes.length === 0
      ? 'all task types'
      : key.allowedTaskTypes.map((t) => fromEnum(TASK_TYPES, t)).join(', ');
  return `${gates} · ${types}`;
}
