/**
 * The create-gate form's values and how they become a gate input. Validation is the server's
 * own rules (`@gatehouse/server/rules/gate`), run on exactly the input that will be sent, so the
 * form can never accept what the server refuses for a reason the form could know.
 */
import {
  crossFieldIssues,
  GATE_DEFAULTS,
  type GateCreate,
  gateCreateSchema,
  type ROUTING_STRATEGIES,
  type SPENDING_ENFORCEMENTS,
  type SPENDING_PERIODS,
  type TaskType,
} from '@gatehouse/server/rules/gate';
import { issuesFromZod } from '@gatehouse/server/rules/issues';
import { toNestErrors } from '@hookform/resolvers';
import type { FieldError, FieldPath, Resolver } from 'react-hook-form';

type FieldIssue = ReturnType<typeof crossFieldIssues>[number];

/** What the inputs hold: text for numbers and tags, one object per fallback (for useFieldArray). */
export type GateFormValues = {
  name: string;
  description: string;
  tags: string;
  taskType: TaskType;
  model: string;
  routingStrategy: (typeof ROUTING_STRATEGIES)[number];
  fallbackModels: { model: string }[];
  systemPrompt: string;
  temperature: string;
  maxTokens: string;
  topP: string;
  spendingLimit: string;
  spendingLimitPeriod: (typeof SPENDING_PERIODS)[number];
  spendingEnforcement: (typeof SPENDING_ENFORCEMENTS)[number];
};

export type GateFormField = FieldPath<GateFormValues>;

export const emptyGateForm: GateFormValues = {
  name: '',
  description: '',
  tags: '',
  taskType: 'chat',
  model: '',
  routingStrategy: GATE_DEFAULTS.routingStrategy,
  fallbackModels: [],
  systemPrompt: '',
  temperature: '',
  maxTokens: '',
  topP: '',
  spendingLimit: '',
  spendingLimitPeriod: GATE_DEFAULTS.spendingLimitPeriod,
  spendingEnforcement: GATE_DEFAULTS.spendingEnforcement,
};

/** Tags are typed as one comma-separated line. */
export function splitTags(text: string): string[] {
  return text
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag !== '');
}

/**
 * The input to send: blank optional fields are left out (the gate's defaults apply), text
 * becomes numbers. Text that cannot be a number is an issue here, as zod never sees it.
 */
export function toGateInput(values: GateFormValues): {
  input: Record<string, unknown>;
  issues: FieldIssue[];
} {
  const issues: FieldIssue[] = [];
  const input: Record<string, unknown> = {
    name: values.name,
    taskType: values.taskType,
    routingStrategy: values.routingStrategy,
    fallbackModels: values.fallbackModels.map(({ model }, i) => {
      if (model === '')
        issues.push({ path: `fallbackModels.${i}`, message: 'choose a model or remove this row' });
      return model;
    }),
    tags: splitTags(values.tags),
    spendingLimitPeriod: values.spendingLimitPeriod,
    spendingEnforcement: values.spendingEnforcement,
  };
  if (values.model === '') issues.push({ path: 'model', message: 'choose a model' });
  else input.model = values.model;
  if (values.description.trim() !== '') input.description = values.description;
  if (values.systemPrompt.trim() !== '') input.systemPrompt = values.systemPrompt;
  for (const field of ['temperature', 'maxTokens', 'topP', 'spendingLimit'] as const) {
    const text = values[field].trim();
    if (text === '') continue;
    const number = Number(text);
    if (Number.isFinite(number)) input[field] = number;
    else issues.push({ path: field, message: 'must be a number' });
  }
  return { input, issues };
}

export type GateFormCheck = { ok: true; value: GateCreate } | { ok: false; issues: FieldIssue[] };

/** The form's values checked by the shared rules: field rules first, then those across fields. */
export function checkGateForm(values: GateFormValues): GateFormCheck {
  const { input, issues } = toGateInput(values);
  const parsed = gateCreateSchema.safeParse(input);
  if (!parsed.success) {
    const flagged = new Set(issues.map((issue) => issue.path));
    issues.push(...issuesFromZod(parsed.error).filter((issue) => !flagged.has(issue.path)));
  } else if (issues.length === 0) {
    issues.push(...crossFieldIssues({ ...GATE_DEFAULTS, ...parsed.data }));
  }
  if (issues.length > 0 || !parsed.success) return { ok: false, issues };
  return { ok: true, value: parsed.data };
}

const topLevelFields = new Set<string>(Object.keys(emptyGateForm));

/**
 * The form field an issue belongs to, from its dotted path ("temperature", "fallbackModels.1",
 * "tags.0"), and the message to show there; null when no field of this form holds it.
 */
export function fieldOfIssue(issue: FieldIssue): { field: GateFormField; message: string } | null {
  const [head = '', index, ...rest] = issue.path.split('.');
  const message = sentence(issue.message);
  if (head === 'fallbackModels' && index !== undefined && rest.length === 0) {
    return { field: `fallbackModels.${Number(index)}.model`, message };
  }
  if (head === 'tags' && index !== undefined) {
    return { field: 'tags', message: `Tag ${Number(index) + 1}: ${issue.message}` };
  }
  if (index === undefined && topLevelFields.has(head)) return { field: head as GateFormField, message };
  return null;
}

function sentence(message: string): string {
  return message.charAt(0).toUpperCase() + message.slice(1);
}

/** react-hook-form runs the shared rules on submit (and on change, once submitted). */
export const gateFormResolver: Resolver<GateFormValues, unknown, GateCreate> = (
  values,
  _context,
  options,
) => {
  const check = checkGateForm(values);
  if (check.ok) return { values: check.value, errors: {} };
  const errors: Record<string, FieldError> = {};
  for (const issue of check.issues) {
    const target = fieldOfIssue(issue);
    const name = target?.field ?? 'root.rules';
    const message = target?.message ?? (issue.path ? `${issue.path}: ${issue.message}` : issue.message);
    errors[name] ??= { type: 'rules', message };
  }
  return { values: {}, errors: toNestErrors(errors, options) };
};
