/**
 * The rules a gate's settings must follow, in one place: the REST API, GraphQL and the
 * dashboard's forms all validate with these schemas. Nothing here knows HTTP or the database;
 * the rules that need the model catalog or the owner's other gates live in domain/gates.ts.
 */
import { z } from 'zod';
import type { FieldIssue } from './issues.ts';
import { issuesFromZod } from './issues.ts';
import { responseSchemaSizeProblem } from './jsonLimits.ts';
import { rateLimitFieldSchemas } from './rateLimits.ts';
import {
  hasNoProtoKey,
  isStorableJson,
  isStorableText,
  PROTO_KEY_MESSAGE,
  STORABLE_TEXT_MESSAGE,
} from './storable.ts';
import { webhookUrlSchema } from './webhooks.ts';

export const TASK_TYPES = [
  'chat',
  'image',
  'video',
  'tts',
  'embeddings',
  'ocr',
  'audio',
  'stt',
  'moderation',
] as const;
/**
 * The native endpoint that calls a gate of each task type; null where none does yet (the
 * dashboard says so rather than offering a gate nothing can call). The server serves exactly
 * these (test/task-endpoints.test.ts).
 */
export const TASK_ENDPOINTS: Record<(typeof TASK_TYPES)[number], string | null> = {
  chat: '/v3/chat',
  image: '/v3/image',
  video: '/v3/video',
  tts: '/v3/tts',
  embeddings: '/v3/embeddings',
  ocr: '/v3/ocr',
  audio: '/v3/audio',
  stt: '/v3/stt',
  moderation: '/v3/moderation',
};

export const TASK_SUBTYPES = ['reasoning', 'code', 'realtime'] as const;
export const ROUTING_STRATEGIES = ['single', 'fallback', 'round-robin'] as const;
export const ANALYSIS_METHODS = ['cost', 'balanced', 'performance', 'custom'] as const;
export const REANALYSIS_PERIODS = ['daily', 'weekly', 'monthly', 'never'] as const;
export const RESPONSE_FORMAT_TYPES = ['text', 'json_object', 'json_schema'] as const;
export const SPENDING_PERIODS = ['monthly', 'daily'] as const;
export const SPENDING_ENFORCEMENTS = ['alert_only', 'block'] as const;
/** A gate's spending status, which the server decides (never set by a client). */
export const SPENDING_STATUSES = ['active', 'suspended'] as const;
export const OVERRIDABLE_FIELDS = ['model', 'temperature', 'maxTokens', 'topP'] as const;
export const GATE_TYPES = ['standard', 'agent'] as const;
export const AGENT_MODES = ['observability', 'orchestrated'] as const;
export const ORCHESTRATIONS = ['static', 'dynamic'] as const;

/**
 * The fields only an agent gate has, with the value a standard gate holds: a standard gate that
 * is given one (or holds another value) is refused naming it.
 */
export const AGENT_FIELD_UNSET = {
  agentMode: null,
  orchestration: null,
  sessionSpendingLimit: null,
  sessionIdleMinutes: 30,
  maxRequestsPerSession: null,
  visibleTools: null,
} as const;
export const AGENT_FIELDS = Object.keys(AGENT_FIELD_UNSET) as (keyof typeof AGENT_FIELD_UNSET)[];
export type AgentFieldName = (typeof AGENT_FIELDS)[number];

export type TaskType = (typeof TASK_TYPES)[number];
export type OverridableField = (typeof OVERRIDABLE_FIELDS)[number];
export type AllowOverrides = boolean | Partial<Record<OverridableField, boolean>>;

/** Fields the service sets; a client that sends one is told so rather than silently ignored. */
export const READ_ONLY_GATE_FIELDS = [
  'id',
  'userId',
  'createdAt',
  'updatedAt',
  'spendingCurrent',
  'spendingPeriodStart',
  'spendingStatus',
  'taskAnalysis',
] as const;

export const LIMITS = {
  nameLength: 100,
  descriptionLength: 2000,
  tags: 20,
  tagLength: 50,
  fallbackModels: 10,
  systemPromptLength: 100_000,
  maxTokens: 2_000_000,
  maxCostPer1kTokens: 1000,
  maxLatencyMs: 600_000,
  spendingLimit: 1_000_000_000,
  sessionIdleMinutes: 10_080,
  visibleTools: 256,
  toolNameLength: 128,
} as const;

const modelId = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200)
  .refine(isStorableText, STORABLE_TEXT_MESSAGE);
const weight = z.number().min(0).max(1).nullable();

/** Tool names an agent (or one of its sub-gates) may see; null is every tool. */
export const visibleToolsSchema = z
  .array(
    z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(LIMITS.toolNameLength, `must be at most ${LIMITS.toolNameLength} characters`)
      .refine(isStorableText, STORABLE_TEXT_MESSAGE),
  )
  .max(LIMITS.visibleTools, `at most ${LIMITS.visibleTools} tools`)
  .superRefine((tools, ctx) => {
    const seen = new Set<string>();
    tools.forEach((tool, i) => {
      if (seen.has(tool)) ctx.addIssue({ code: 'custom', path: [i], message: 'is listed twice' });
      seen.add(tool);
    });
  })
  .nullable();

export const allowOverridesSchema = z.union([
  z.boolean(),
  z.strictObject({
    model: z.boolean().optional(),
    temperature: z.boolean().optional(),
    maxTokens: z.boolean().optional(),
    topP: z.boolean().optional(),
  }),
]);

/** Every settable gate field with its type and range; all optional here. */
export const gateFieldSchemas = {
  name: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(LIMITS.nameLength, `must be at most ${LIMITS.nameLength} characters`)
    .refine(isStorableText, STORABLE_TEXT_MESSAGE),
  description: z
    .string()
    .max(LIMITS.descriptionLength)
    .refine(isStorableText, STORABLE_TEXT_MESSAGE)
    .nullable(),
  autoEnhanceDescription: z.boolean(),
  taskType: z.enum(TASK_TYPES),
  taskSubtype: z.enum(TASK_SUBTYPES).nullable(),
  tags: z
    .array(
      z
        .string()
        .trim()
        .min(1, 'must not be empty')
        .max(LIMITS.tagLength)
        .refine(isStorableText, STORABLE_TEXT_MESSAGE),
    )
    .max(LIMITS.tags, `at most ${LIMITS.tags} tags`),
  model: modelId,
  routingStrategy: z.enum(ROUTING_STRATEGIES),
  fallbackModels: z
    .array(modelId)
    .max(LIMITS.fallbackModels, `at most ${LIMITS.fallbackModels} fallback models`),
  systemPrompt: z
    .string()
    .max(LIMITS.systemPromptLength)
    .refine(isStorableText, STORABLE_TEXT_MESSAGE)
    .nullable(),
  temperature: z.number().min(0).max(2).nullable(),
  maxTokens: z.number().int().min(1).max(LIMITS.maxTokens).nullable(),
  topP: z.number().min(0).max(1).nullable(),
  allowOverrides: allowOverridesSchema,
  /**
   * Drop-in requests translated for a model of another family: refuse (400, naming the tool and
   * the model) those with hosted tools the model cannot run (web search, code interpreter…),
   * instead of leaving the tools out.
   */
  strictHostedTools: z.boolean(),
  costWeight: weight,
  latencyWeight: weight,
  qualityWeight: weight,
  analysisMethod: z.enum(ANALYSIS_METHODS).nullable(),
  maxCostPer1kTokens: z.number().min(0).max(LIMITS.maxCostPer1kTokens).nullable(),
  maxLatencyMs: z.number().int().min(1).max(LIMITS.maxLatencyMs).nullable(),
  reanalysisPeriod: z.enum(REANALYSIS_PERIODS),
  autoApplyRecommendations: z.boolean(),
  responseFormatEnabled: z.boolean(),
  responseFormatType: z.enum(RESPONSE_FORMAT_TYPES),
  // Checked before the record is built: building it drops a "__proto__" key without a word.
  // Depth and size first, and alone: every other check walks the value recursively.
  responseFormatSchema: z
    .unknown()
    .superRefine((value, ctx) => {
      const problem = responseSchemaSizeProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem, input: value, continue: false });
    })
    .refine(hasNoProtoKey, PROTO_KEY_MESSAGE)
    .pipe(z.record(z.string(), z.unknown()).refine(isStorableJson, STORABLE_TEXT_MESSAGE))
    .nullable(),
  spendingLimit: z.number().min(0).max(LIMITS.spendingLimit).nullable(),
  spendingLimitPeriod: z.enum(SPENDING_PERIODS),
  spendingEnforcement: z.enum(SPENDING_ENFORCEMENTS),
  /** Where an alert goes when the limit is crossed; null: the account's default, if any. */
  spendingAlertWebhook: webhookUrlSchema.nullable(),
  /** What any one end user (x-gatehouse-user, `user`, `metadata.user_id`) may spend per period. */
  endUserSpendingLimit: z.number().positive('must be more than 0').max(LIMITS.spendingLimit).nullable(),
  endUserSpendingLimitPeriod: z.enum(SPENDING_PERIODS),
  ...rateLimitFieldSchemas,
  gateType: z.enum(GATE_TYPES),
  // Null on an agent gate means the default (observability; static when orchestrated).
  agentMode: z.enum(AGENT_MODES).nullable(),
  orchestration: z.enum(ORCHESTRATIONS).nullable(),
  sessionSpendingLimit: z.number().min(0).max(LIMITS.spendingLimit).nullable(),
  sessionIdleMinutes: z
    .number()
    .int()
    .min(1)
    .max(LIMITS.sessionIdleMinutes, `must be at most ${LIMITS.sessionIdleMinutes} (a week)`),
  maxRequestsPerSession: z.number().int().min(1).max(2_147_483_647).nullable(),
  visibleTools: visibleToolsSchema,
};

export type GateFieldName = keyof typeof gateFieldSchemas;
export const GATE_FIELDS = Object.keys(gateFieldSchemas) as GateFieldName[];

export const gatePatchSchema = z.object(gateFieldSchemas).partial();
export const gateCreateSchema = gatePatchSchema.required({
  name: true,
  model: true,
  taskType: true,
});

export type GatePatch = z.infer<typeof gatePatchSchema>;
export type GateCreate = z.infer<typeof gateCreateSchema>;

/** The settings a stored gate has after defaults: what cross-field rules look at. */
export type GateSettings = {
  [K in GateFieldName]-?: Exclude<GatePatch[K], undefined>;
};

export const GATE_DEFAULTS: Omit<GateSettings, 'name' | 'model' | 'taskType'> = {
  description: null,
  autoEnhanceDescription: false,
  taskSubtype: null,
  tags: [],
  routingStrategy: 'single',
  fallbackModels: [],
  systemPrompt: null,
  temperature: null,
  maxTokens: null,
  topP: null,
  allowOverrides: false,
  strictHostedTools: false,
  costWeight: null,
  latencyWeight: null,
  qualityWeight: null,
  analysisMethod: null,
  maxCostPer1kTokens: null,
  maxLatencyMs: null,
  reanalysisPeriod: 'never',
  autoApplyRecommendations: false,
  responseFormatEnabled: false,
  responseFormatType: 'text',
  responseFormatSchema: null,
  spendingLimit: null,
  spendingLimitPeriod: 'monthly',
  spendingEnforcement: 'alert_only',
  spendingAlertWebhook: null,
  endUserSpendingLimit: null,
  endUserSpendingLimitPeriod: 'monthly',
  rateLimitRpm: null,
  rateLimitTpm: null,
  gateType: 'standard',
  ...AGENT_FIELD_UNSET,
};

/**
 * The settings a gate has after `patch` is applied to `base` (the stored gate, or the defaults
 * on create), with the agent fields settled: an agent gate's mode defaults to observability and
 * an orchestrated one's orchestration to static; a gate that becomes standard, or an agent gate
 * that becomes observability, drops the fields it no longer has unless the patch sets them (and
 * is then refused by crossFieldIssues, naming them).
 */
export function settleGateSettings<T extends GateSettings>(base: T, patch: GatePatch): T {
  const merged = { ...base, ...patch };
  if (merged.gateType === 'standard') {
    for (const field of AGENT_FIELDS) {
      if (!(field in patch)) Object.assign(merged, { [field]: AGENT_FIELD_UNSET[field] });
    }
    return merged;
  }
  merged.agentMode ??= 'observability';
  if (merged.agentMode === 'orchestrated') merged.orchestration ??= 'static';
  else if (!('orchestration' in patch)) merged.orchestration = null;
  return merged;
}

type Parsed<T> = { ok: true; value: T } | { ok: false; issues: FieldIssue[] };

/**
 * Parses a create or update body. Unknown and read-only fields are refused by name, so a typo
 * ("temprature") is an error rather than a silently ignored setting.
 */
export function parseGateInput(raw: unknown, mode: 'create'): Parsed<GateCreate>;
export function parseGateInput(raw: unknown, mode: 'update'): Parsed<GatePatch>;
export function parseGateInput(raw: unknown, mode: 'create' | 'update'): Parsed<GateCreate | GatePatch> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, issues: [{ path: '', message: 'body must be a JSON object' }] };
  }
  const issues: FieldIssue[] = [];
  for (const key of Object.keys(raw)) {
    if ((READ_ONLY_GATE_FIELDS as readonly string[]).includes(key)) {
      issues.push({ path: key, message: 'is read-only and cannot be set' });
    } else if (!(key in gateFieldSchemas)) {
      issues.push({ path: key, message: 'is not a gate field' });
    }
  }
  const schema = mode === 'create' ? gateCreateSchema : gatePatchSchema;
  const result = schema.safeParse(raw);
  if (!result.success) issues.push(...issuesFromZod(result.error));
  if (issues.length > 0 || !result.success) return { ok: false, issues };
  if (mode === 'update' && Object.keys(result.data).length === 0) {
    return { ok: false, issues: [{ path: '', message: 'no gate field to update' }] };
  }
  return { ok: true, value: result.data };
}

/**
 * Rules that tie fields together; checked on the whole gate as it would be stored. `sent` names
 * the fields the input carried: a standard gate refuses an agent field sent even at the value
 * a standard gate holds.
 */
export function crossFieldIssues(gate: GateSettings, sent: readonly string[] = []): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (gate.gateType === 'standard') {
    for (const field of AGENT_FIELDS) {
      if (sent.includes(field) || gate[field] !== AGENT_FIELD_UNSET[field]) {
        issues.push({ path: field, message: 'applies to agent gates only (gateType is standard)' });
      }
    }
  } else if (gate.orchestration !== null && gate.agentMode !== 'orchestrated') {
    issues.push({ path: 'orchestration', message: 'applies to orchestrated agent gates only' });
  }
  if (gate.taskSubtype !== null && gate.taskType !== 'chat') {
    issues.push({ path: 'taskSubtype', message: 'applies to chat gates only' });
  }
  const seen = new Set<string>([gate.model]);
  gate.fallbackModels.forEach((model, i) => {
    if (seen.has(model)) {
      issues.push({
        path: `fallbackModels.${i}`,
        message:
          model === gate.model ? 'is the primary model already' : 'is listed twice among the fallbacks',
      });
    }
    seen.add(model);
  });
  const tags = new Set<string>();
  gate.tags.forEach((tag, i) => {
    if (tags.has(tag)) issues.push({ path: `tags.${i}`, message: 'is listed twice' });
    tags.add(tag);
  });
  if (
    gate.responseFormatEnabled &&
    gate.responseFormatType === 'json_schema' &&
    gate.responseFormatSchema === null
  ) {
    issues.push({
      path: 'responseFormatSchema',
      message: 'is required when responseFormatType is json_schema',
    });
  }
  if (gate.analysisMethod === 'custom') {
    for (const field of ['costWeight', 'latencyWeight', 'qualityWeight'] as const) {
      if (gate[field] === null) {
        issues.push({ path: field, message: 'is required when analysisMethod is custom' });
      }
    }
  }
  return issues;
}

/** Whether a client may override `field` on a gate with these permissions. */
export function overrideAllowed(allow: AllowOverrides, field: OverridableField): boolean {
  return allow === true || (typeof allow === 'object' && allow[field] === true);
}
