/**
 * Editing a stored gate: its settings as form values, the changed ones as a patch (an update sends
 * only what changed), checked by the shared patch rules and then the cross-field rules on the gate
 * as it would be stored once the patch is applied, as the server does.
 */
import {
  crossFieldIssues,
  GATE_DEFAULTS,
  type GatePatch,
  type GateSettings,
  gatePatchSchema,
  OVERRIDABLE_FIELDS,
} from '@gatehouse/rules/gate';
import { issuesFromZod } from '@gatehouse/rules/issues';
import { gateFromGraphQL } from '../graphqlEnums.ts';
import type { GateDetailData } from './gateDetail.ts';
import {
  emptyGateForm,
  FORM_GATE_FIELDS,
  type GateFieldName,
  type GateFormCheck,
  type GateFormField,
  type GateFormValues,
  type OverrideMode,
  readGateForm,
  resolverOf,
  sameSetting,
  withoutFlagged,
} from './gateForm.ts';

/** A gate's settings as GraphQL returns them (choices as enum values, JSON as unknown). */
export type StoredGate = Pick<GateDetailData, GateFieldName>;

const text = (value: number | string | null) => (value === null ? '' : String(value));

function overridesToForm(allow: unknown): Pick<GateFormValues, 'overrideMode' | 'overrideFields'> {
  const fields = { ...emptyGateForm.overrideFields };
  if (allow === true) return { overrideMode: 'all', overrideFields: fields };
  if (allow && typeof allow === 'object') {
    for (const field of OVERRIDABLE_FIELDS)
      fields[field] = (allow as Record<string, unknown>)[field] === true;
    return { overrideMode: 'fields', overrideFields: fields };
  }
  return { overrideMode: 'none' as OverrideMode, overrideFields: fields };
}

/** The form values that show a stored gate. */
export function gateToForm(stored: StoredGate): GateFormValues {
  const gate = gateFromGraphQL(stored);
  return {
    name: gate.name,
    description: gate.description ?? '',
    autoEnhanceDescription: gate.autoEnhanceDescription,
    taskType: gate.taskType,
    taskSubtype: gate.taskSubtype ?? '',
    tags: gate.tags.join(', '),
    model: gate.model,
    routingStrategy: gate.routingStrategy,
    fallbackModels: gate.fallbackModels.map((model) => ({ model })),
    analysisMethod: gate.analysisMethod ?? '',
    costWeight: text(gate.costWeight),
    latencyWeight: text(gate.latencyWeight),
    qualityWeight: text(gate.qualityWeight),
    maxCostPer1kTokens: text(gate.maxCostPer1kTokens),
    maxLatencyMs: text(gate.maxLatencyMs),
    reanalysisPeriod: gate.reanalysisPeriod,
    autoApplyRecommendations: gate.autoApplyRecommendations,
    systemPrompt: gate.systemPrompt ?? '',
    temperature: text(gate.temperature),
    maxTokens: text(gate.maxTokens),
    topP: text(gate.topP),
    ...overridesToForm(gate.allowOverrides),
    strictHostedTools: gate.strictHostedTools,
    responseFormatEnabled: gate.responseFormatEnabled,
    responseFormatType: gate.responseFormatType,
    responseFormatSchema:
      gate.responseFormatSchema === null || gate.responseFormatSchema === undefined
        ? ''
        : JSON.stringify(gate.responseFormatSchema, null, 2),
    spendingLimit: text(gate.spendingLimit),
    spendingLimitPeriod: gate.spendingLimitPeriod,
    spendingEnforcement: gate.spendingEnforcement,
    spendingAlertWebhook: gate.spendingAlertWebhook ?? '',
    endUserSpendingLimit: text(gate.endUserSpendingLimit),
    endUserSpendingLimitPeriod: gate.endUserSpendingLimitPeriod,
    rateLimitRpm: text(gate.rateLimitRpm),
    rateLimitTpm: text(gate.rateLimitTpm),
    gateType: gate.gateType,
    agentMode: gate.agentMode ?? 'observability',
    orchestration: gate.orchestration ?? 'static',
    sessionSpendingLimit: text(gate.sessionSpendingLimit),
    sessionIdleMinutes: text(gate.sessionIdleMinutes),
    maxRequestsPerSession: text(gate.maxRequestsPerSession),
    visibleTools: gate.visibleTools?.join(', ') ?? '',
  };
}

/** The settings whose value differs from the gate as loaded, with their new values. */
export function changedSettings(
  initial: GateFormValues,
  values: GateFormValues,
): { patch: Record<string, unknown>; issues: ReturnType<typeof readGateForm>['issues'] } {
  const before = readGateForm(initial).settings;
  const { settings, issues } = readGateForm(values);
  const patch: Record<string, unknown> = {};
  for (const field of FORM_GATE_FIELDS) {
    if (!sameSetting(settings[field], before[field])) patch[field] = settings[field];
  }
  // Only issues of what is sent: an untouched field is the server's stored value.
  const sent = (path: string) => (path.split('.')[0] ?? '') in patch;
  return { patch, issues: issues.filter((issue) => sent(issue.path)) };
}

/** The stored gate in the shape the cross-field rules read, or null if it does not parse. */
function storedSettings(stored: StoredGate): GateSettings | null {
  const gate = gateFromGraphQL(stored);
  const fields = Object.fromEntries(FORM_GATE_FIELDS.map((field) => [field, gate[field]]));
  const parsed = gatePatchSchema.safeParse(fields);
  return parsed.success ? ({ ...GATE_DEFAULTS, ...parsed.data } as GateSettings) : null;
}

/** An edit checked as the server will: the patch by the field rules, the merged gate across fields. */
export function checkGateEdit(
  values: GateFormValues,
  initial: GateFormValues,
  stored: StoredGate,
): GateFormCheck<GatePatch> {
  const { patch, issues } = changedSettings(initial, values);
  const parsed = gatePatchSchema.safeParse(patch);
  if (!parsed.success) {
    issues.push(...withoutFlagged(issues, issuesFromZod(parsed.error)));
  } else if (issues.length === 0) {
    const before = storedSettings(stored);
    if (before) issues.push(...crossFieldIssues({ ...before, ...parsed.data }));
  }
  if (issues.length > 0 || !parsed.success) return { ok: false, issues };
  return { ok: true, value: parsed.data };
}

/** The resolver for the gate page; reads the gate as last loaded or saved at each check. */
export const gateEditResolver = (initial: () => GateFormValues, stored: () => StoredGate) =>
  resolverOf((values) => checkGateEdit(values, initial(), stored()));

export const GATE_TABS = [
  { id: 'basic', label: 'Basic Info' },
  { id: 'routing', label: 'Models & Routing' },
  { id: 'request', label: 'Request Config' },
  { id: 'spending', label: 'Spending Limits' },
  { id: 'try', label: 'Try it' },
  { id: 'subgates', label: 'Sub-Gates' },
  { id: 'sessions', label: 'Sessions' },
  { id: 'connections', label: 'Connections' },
  { id: 'history', label: 'History' },
  { id: 'danger', label: 'Danger Zone' },
] as const;

export type GateTab = (typeof GATE_TABS)[number]['id'];
/** The tabs an agent gate has and a standard one does not. */
export const AGENT_TABS: readonly GateTab[] = ['subgates', 'sessions'];
/** The tabs that hold no form field, and so no Save. */
export const OTHER_TABS = ['try', 'subgates', 'sessions', 'connections', 'history', 'danger'] as const;
/** The tabs whose fields the form holds; the others have no Save. */
export type FormTab = Exclude<GateTab, (typeof OTHER_TABS)[number]>;
export const isFormTab = (tab: GateTab): tab is FormTab => !(OTHER_TABS as readonly string[]).includes(tab);

/** The tabs a gate shows: the agent ones only on an agent gate. */
export const tabsOf = (agent: boolean) => GATE_TABS.filter((tab) => agent || !AGENT_TABS.includes(tab.id));

const TAB_OF_FIELD: Record<keyof GateFormValues, FormTab> = {
  name: 'basic',
  description: 'basic',
  autoEnhanceDescription: 'basic',
  taskType: 'basic',
  taskSubtype: 'basic',
  tags: 'basic',
  model: 'routing',
  routingStrategy: 'routing',
  fallbackModels: 'routing',
  analysisMethod: 'routing',
  costWeight: 'routing',
  latencyWeight: 'routing',
  qualityWeight: 'routing',
  maxCostPer1kTokens: 'routing',
  maxLatencyMs: 'routing',
  reanalysisPeriod: 'routing',
  autoApplyRecommendations: 'routing',
  systemPrompt: 'request',
  temperature: 'request',
  maxTokens: 'request',
  topP: 'request',
  overrideMode: 'request',
  overrideFields: 'request',
  strictHostedTools: 'request',
  responseFormatEnabled: 'request',
  responseFormatType: 'request',
  responseFormatSchema: 'request',
  spendingLimit: 'spending',
  spendingLimitPeriod: 'spending',
  spendingEnforcement: 'spending',
  spendingAlertWebhook: 'spending',
  endUserSpendingLimit: 'spending',
  endUserSpendingLimitPeriod: 'spending',
  rateLimitRpm: 'spending',
  rateLimitTpm: 'spending',
  gateType: 'basic',
  agentMode: 'basic',
  orchestration: 'basic',
  sessionSpendingLimit: 'basic',
  sessionIdleMinutes: 'basic',
  maxRequestsPerSession: 'basic',
  visibleTools: 'basic',
};

/** The tab that shows a form field ("fallbackModels.1.model" is on Models & Routing). */
export function tabOfField(field: GateFormField | string): FormTab | null {
  const head = field.split('.')[0] as keyof GateFormValues;
  return TAB_OF_FIELD[head] ?? null;
}

/** The fields in the order the tabs show them, for "the first error". */
export const FIELD_ORDER = Object.keys(TAB_OF_FIELD) as (keyof GateFormValues)[];

/** The tab a `?tab=` names, Basic Info when it names none this gate has. */
export function tabFromSearch(value: string | null, agent = true): GateTab {
  return tabsOf(agent).find((tab) => tab.id === value)?.id ?? 'basic';
}
