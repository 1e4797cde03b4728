/**
 * The gate form's values and how they become a gate input. Validation is the shared rules
 * (`@gatehouse/rules/gate`, the server's own), run on exactly the input that will be sent, so the form can
 * never accept what the server refuses for a reason the form could know. The create page and the
 * gate page share these values; each decides which settings it sends (see gateEdit.ts).
 */
import {
  AGENT_FIELD_UNSET,
  type AGENT_MODES,
  type AllowOverrides,
  type ANALYSIS_METHODS,
  type GateFieldName as AnyGateFieldName,
  crossFieldIssues,
  GATE_DEFAULTS,
  GATE_FIELDS,
  type GATE_TYPES,
  type GateCreate,
  gateCreateSchema,
  type ORCHESTRATIONS,
  OVERRIDABLE_FIELDS,
  type OverridableField,
  type REANALYSIS_PERIODS,
  type RESPONSE_FORMAT_TYPES,
  type ROUTING_STRATEGIES,
  type SPENDING_ENFORCEMENTS,
  type SPENDING_PERIODS,
  type TASK_SUBTYPES,
  type TaskType,
} from '@gatehouse/rules/gate';
import { issuesFromZod } from '@gatehouse/rules/issues';
import { toNestErrors } from '@hookform/resolvers';
import type { FieldError, FieldPath, Resolver } from 'react-hook-form';
import { sentence } from '../forms/formErrors.ts';

/**
 * The fields this form edits: every gate field. The agent fields (issue 13) show on agent gates
 * only; on a standard gate they hold the values a standard gate has, so they are never sent.
 */
export type GateFieldName = AnyGateFieldName;
export const FORM_GATE_FIELDS: readonly GateFieldName[] = GATE_FIELDS;

export type FieldIssue = ReturnType<typeof crossFieldIssues>[number];

/** Who may override the gate's parameters per request: nobody, anyone, or chosen fields. */
export type OverrideMode = 'none' | 'all' | 'fields';

/**
 * What the inputs hold: text for numbers, tags and the JSON schema; one object per fallback (for
 * useFieldArray); '' for "none" in optional choices.
 */
export type GateFormValues = {
  name: string;
  description: string;
  autoEnhanceDescription: boolean;
  taskType: TaskType;
  taskSubtype: '' | (typeof TASK_SUBTYPES)[number];
  tags: string;
  model: string;
  routingStrategy: (typeof ROUTING_STRATEGIES)[number];
  fallbackModels: { model: string }[];
  analysisMethod: '' | (typeof ANALYSIS_METHODS)[number];
  costWeight: string;
  latencyWeight: string;
  qualityWeight: string;
  maxCostPer1kTokens: string;
  maxLatencyMs: string;
  reanalysisPeriod: (typeof REANALYSIS_PERIODS)[number];
  autoApplyRecommendations: boolean;
  systemPrompt: string;
  temperature: string;
  maxTokens: string;
  topP: string;
  overrideMode: OverrideMode;
  overrideFields: Record<OverridableField, boolean>;
  strictHostedTools: boolean;
  responseFormatEnabled: boolean;
  responseFormatType: (typeof RESPONSE_FORMAT_TYPES)[number];
  responseFormatSchema: string;
  spendingLimit: string;
  spendingLimitPeriod: (typeof SPENDING_PERIODS)[number];
  spendingEnforcement: (typeof SPENDING_ENFORCEMENTS)[number];
  /** Blank: the account's default webhook (Settings), if any. */
  spendingAlertWebhook: string;
  endUserSpendingLimit: string;
  endUserSpendingLimitPeriod: (typeof SPENDING_PERIODS)[number];
  rateLimitRpm: string;
  rateLimitTpm: string;
  gateType: (typeof GATE_TYPES)[number];
  agentMode: (typeof AGENT_MODES)[number];
  orchestration: (typeof ORCHESTRATIONS)[number];
  sessionSpendingLimit: string;
  sessionIdleMinutes: string;
  maxRequestsPerSession: string;
  /** Comma-separated tool names; blank is every tool. */
  visibleTools: string;
};

export type GateFormField = FieldPath<GateFormValues>;

export const emptyGateForm: GateFormValues = {
  name: '',
  description: '',
  autoEnhanceDescription: GATE_DEFAULTS.autoEnhanceDescription,
  taskType: 'chat',
  taskSubtype: '',
  tags: '',
  model: '',
  routingStrategy: GATE_DEFAULTS.routingStrategy,
  fallbackModels: [],
  analysisMethod: '',
  costWeight: '',
  latencyWeight: '',
  qualityWeight: '',
  maxCostPer1kTokens: '',
  maxLatencyMs: '',
  reanalysisPeriod: GATE_DEFAULTS.reanalysisPeriod,
  autoApplyRecommendations: GATE_DEFAULTS.autoApplyRecommendations,
  systemPrompt: '',
  temperature: '',
  maxTokens: '',
  topP: '',
  overrideMode: 'none',
  overrideFields: { model: false, temperature: false, maxTokens: false, topP: false },
  strictHostedTools: GATE_DEFAULTS.strictHostedTools,
  responseFormatEnabled: GATE_DEFAULTS.responseFormatEnabled,
  responseFormatType: GATE_DEFAULTS.responseFormatType,
  responseFormatSchema: '',
  spendingLimit: '',
  spendingLimitPeriod: GATE_DEFAULTS.spendingLimitPeriod,
  spendingEnforcement: GATE_DEFAULTS.spendingEnforcement,
  spendingAlertWebhook: '',
  endUserSpendingLimit: '',
  endUserSpendingLimitPeriod: GATE_DEFAULTS.endUserSpendingLimitPeriod,
  rateLimitRpm: '',
  rateLimitTpm: '',
  gateType: GATE_DEFAULTS.gateType,
  agentMode: 'observability',
  orchestration: 'static',
  sessionSpendingLimit: '',
  sessionIdleMinutes: String(AGENT_FIELD_UNSET.sessionIdleMinutes),
  maxRequestsPerSession: '',
  visibleTools: '',
};

/** Tags are typed as one comma-separated line. */
export function splitTags(text: string): string[] {
  return text
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag !== '');
}

/** The permissions the override choice stands for: false, true, or one boolean per field. */
export function allowOverridesOf(
  mode: OverrideMode,
  fields: Record<OverridableField, boolean>,
): AllowOverrides {
  if (mode === 'all') return true;
  if (mode === 'none') return false;
  return Object.fromEntries(OVERRIDABLE_FIELDS.map((field) => [field, fields[field] === true]));
}

const NUMBER_FIELDS = [
  'temperature',
  'maxTokens',
  'topP',
  'costWeight',
  'latencyWeight',
  'qualityWeight',
  'maxCostPer1kTokens',
  'maxLatencyMs',
  'spendingLimit',
  'endUserSpendingLimit',
  'rateLimitRpm',
  'rateLimitTpm',
  'sessionSpendingLimit',
  'maxRequestsPerSession',
] as const;

/** The error JSON.parse gives for the schema text, or null when it parses (or is blank). */
export function jsonProblem(text: string): string | null {
  if (text.trim() === '') return null;
  try {
    JSON.parse(text);
    return null;
  } catch (error) {
    return `is not valid JSON: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * Every setting as the server would store it: blank text is null, text becomes numbers, the JSON
 * schema is parsed. Text that cannot be a number or JSON is an issue here, as zod never sees it.
 */
export function readGateForm(values: GateFormValues): {
  settings: Record<GateFieldName, unknown>;
  issues: FieldIssue[];
} {
  const issues: FieldIssue[] = [];
  const blankIsNull = (text: string) => (text.trim() === '' ? null : text);
  const numbers = {} as Record<(typeof NUMBER_FIELDS)[number], number | null>;
  for (const field of NUMBER_FIELDS) {
    const text = values[field].trim();
    const number = text === '' ? null : Number(text);
    if (number !== null && !Number.isFinite(number))
      issues.push({ path: field, message: 'must be a number' });
    numbers[field] = number;
  }
  // Text that is not JSON stays text: it differs from any stored schema, so an edit sends it
  // (and the issue here is what the user reads, not the schema rule's).
  let responseFormatSchema: unknown = null;
  const problem = jsonProblem(values.responseFormatSchema);
  if (problem) {
    issues.push({ path: 'responseFormatSchema', message: problem });
    responseFormatSchema = values.responseFormatSchema;
  } else if (values.responseFormatSchema.trim() !== '') {
    responseFormatSchema = JSON.parse(values.responseFormatSchema);
  }
  if (values.model === '') issues.push({ path: 'model', message: 'choose a model' });
  const fallbackModels = values.fallbackModels.map(({ model }, i) => {
    if (model === '')
      issues.push({ path: `fallbackModels.${i}`, message: 'choose a model or remove this row' });
    return model;
  });

  const settings: Record<GateFieldName, unknown> = {
    name: values.name,
    description: blankIsNull(values.description),
    autoEnhanceDescription: values.autoEnhanceDescription,
    taskType: values.taskType,
    taskSubtype: values.taskSubtype === '' ? null : values.taskSubtype,
    tags: splitTags(values.tags),
    model: values.model,
    routingStrategy: values.routingStrategy,
    fallbackModels,
    systemPrompt: blankIsNull(values.systemPrompt),
    allowOverrides: allowOverridesOf(values.overrideMode, values.overrideFields),
    strictHostedTools: values.strictHostedTools,
    analysisMethod: values.analysisMethod === '' ? null : values.analysisMethod,
    reanalysisPeriod: values.reanalysisPeriod,
    autoApplyRecommendations: values.autoApplyRecommendations,
    responseFormatEnabled: values.responseFormatEnabled,
    responseFormatType: values.responseFormatType,
    responseFormatSchema,
    spendingLimitPeriod: values.spendingLimitPeriod,
    spendingEnforcement: values.spendingEnforcement,
    spendingAlertWebhook: blankIsNull(values.spendingAlertWebhook.trim()),
    endUserSpendingLimitPeriod: values.endUserSpendingLimitPeriod,
    ...numbers,
    ...readAgentFields(values, numbers, issues),
  };
  return { settings, issues };
}

/**
 * The gate type and the agent fields: on a standard gate the values a standard gate holds,
 * whatever the hidden inputs say; on an agent gate what they say (orchestration only when
 * orchestrated, blank visible tools as every tool).
 */
function readAgentFields(
  values: GateFormValues,
  numbers: Record<(typeof NUMBER_FIELDS)[number], number | null>,
  issues: FieldIssue[],
): Record<'gateType' | keyof typeof AGENT_FIELD_UNSET, unknown> {
  if (values.gateType !== 'agent') return { gateType: values.gateType, ...AGENT_FIELD_UNSET };
  const idle = values.sessionIdleMinutes.trim();
  const sessionIdleMinutes = idle === '' ? Number.NaN : Number(idle);
  if (!Number.isFinite(sessionIdleMinutes)) {
    issues.push({ path: 'sessionIdleMinutes', message: 'must be a number of minutes' });
  }
  const tools = values.visibleTools.trim() === '' ? null : splitTags(values.visibleTools);
  return {
    gateType: 'agent',
    agentMode: values.agentMode,
    orchestration: values.agentMode === 'orchestrated' ? values.orchestration : null,
    sessionSpendingLimit: numbers.sessionSpendingLimit,
    sessionIdleMinutes: Number.isFinite(sessionIdleMinutes) ? sessionIdleMinutes : values.sessionIdleMinutes,
    maxRequestsPerSession: numbers.maxRequestsPerSession,
    visibleTools: tools,
  };
}

/** Always sent on create, so the stored gate says what the form showed. */
const SENT_ON_CREATE = new Set<GateFieldName>([
  'name',
  'taskType',
  'routingStrategy',
  'fallbackModels',
  'tags',
  'spendingLimitPeriod',
  'spendingEnforcement',
]);

/**
 * The input to create a gate: the required and always-shown settings, and any other that differs
 * from the gate's default (a blank field is left out, so the default applies).
 */
export function toGateInput(values: GateFormValues): {
  input: Record<string, unknown>;
  issues: FieldIssue[];
} {
  const { settings, issues } = readGateForm(values);
  const input: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(settings) as [GateFieldName, unknown][]) {
    if (field === 'model') {
      if (value !== '') input.model = value;
    } else if (
      SENT_ON_CREATE.has(field) ||
      !sameSetting(value, GATE_DEFAULTS[field as keyof typeof GATE_DEFAULTS])
    ) {
      input[field] = value;
    }
  }
  return { input, issues };
}

/** Whether two settings are the same value (numbers, text, lists, JSON objects). */
export function sameSetting(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => sameSetting(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const keysA = Object.keys(a);
    const keysB = Object.keys(b);
    return (
      keysA.length === keysB.length &&
      // Own keys only: a parsed schema may own a "__proto__" key, which every object inherits.
      keysA.every(
        (key) =>
          Object.hasOwn(b, key) &&
          sameSetting((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
      )
    );
  }
  return false;
}

export type GateFormCheck<T> = { ok: true; value: T } | { ok: false; issues: FieldIssue[] };

/** Issues from the field rules, leaving out a path the form has flagged already (its message is clearer). */
export function withoutFlagged(flagged: FieldIssue[], more: FieldIssue[]): FieldIssue[] {
  const paths = new Set(flagged.map((issue) => issue.path));
  return more.filter((issue) => !paths.has(issue.path));
}

/** The create form's values checked by the shared rules: field rules first, then those across fields. */
export function checkGateForm(values: GateFormValues): GateFormCheck<GateCreate> {
  const { input, issues } = toGateInput(values);
  const parsed = gateCreateSchema.safeParse(input);
  if (!parsed.success) {
    issues.push(...withoutFlagged(issues, issuesFromZod(parsed.error)));
  } else if (issues.length === 0) {
    issues.push(...crossFieldIssues({ ...GATE_DEFAULTS, ...parsed.data }));
  }
  if (issues.length > 0 || !parsed.success) return { ok: false, issues };
  return { ok: true, value: parsed.data };
}

const topLevelFields = new Set<string>(Object.keys(emptyGateForm));

/**
 * The form field an issue belongs to, from its dotted path ("temperature", "fallbackModels.1",
 * "tags.0", "allowOverrides.model"), and the message to show there; null when no field holds it.
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
  if (head === 'visibleTools' && index !== undefined) {
    return { field: 'visibleTools', message: `Tool ${Number(index) + 1}: ${issue.message}` };
  }
  if (head === 'allowOverrides') {
    return { field: 'overrideMode', message: index === undefined ? message : `${index}: ${issue.message}` };
  }
  if (head === 'responseFormatSchema') {
    const inner = [index, ...rest].filter((part) => part !== undefined).join('.');
    return { field: 'responseFormatSchema', message: inner ? `${inner}: ${issue.message}` : message };
  }
  if (
    index === undefined &&
    topLevelFields.has(head) &&
    head !== 'overrideMode' &&
    head !== 'overrideFields'
  ) {
    return { field: head as GateFormField, message };
  }
  return null;
}

/** Issues as react-hook-form errors: each on its field, the rest together at the top. */
export function issuesToErrors(issues: FieldIssue[]): Record<string, FieldError> {
  const errors: Record<string, FieldError> = {};
  for (const issue of issues) {
    const target = fieldOfIssue(issue);
    const name = target?.field ?? 'root.rules';
    const message = target?.message ?? (issue.path ? `${issue.path}: ${issue.message}` : issue.message);
    errors[name] ??= { type: 'rules', message };
  }
  return errors;
}

/** A react-hook-form resolver running one of the checks above on submit (and on change, once submitted). */
export function resolverOf<T>(
  check: (values: GateFormValues) => GateFormCheck<T>,
): Resolver<GateFormValues, unknown, T> {
  return (values, _context, options) => {
    const result = check(values);
    if (result.ok) return { values: result.value, errors: {} };
    return { values: {}, errors: toNestErrors(issuesToErrors(result.issues), options) };
  };
}

export const gateFormResolver = resolverOf(checkGateForm);
