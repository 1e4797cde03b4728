import {
  AGENT_FIELDS,
  crossFieldIssues,
  GATE_DEFAULTS,
  type GatePatch,
  type GateSettings,
  gateFieldSchemas,
  LIMITS,
  parseGateInput,
  settleGateSettings,
  TASK_TYPES,
} from '@gatehouse/rules/gate';
import { isUuid } from '@gatehouse/rules/ids';
import type { FieldIssue } from '@gatehouse/rules/issues';
import { isStorableText, STORABLE_TEXT_MESSAGE } from '@gatehouse/rules/storable';
import { z } from 'zod';
import { gateRequestWorstCase } from '../dataplane/cost.ts';
import { publish } from '../db/changes.ts';
import { prisma } from '../db/client.ts';
import { transaction } from '../db/transaction.ts';
import { responseSchemaProblem } from '../domain/responseSchema.ts';
import { type Gate, Prisma } from '../generated/prisma/client.ts';
import { type ModelReader, withEnhancedDescription } from './architectRead.ts';
import { type ModelNames, modelProblem } from './catalog.ts';
import { ConflictError, NotFoundError, PlanLimitError, parseWith, ValidationError } from './errors.ts';
import { getGate } from './gateCache.ts';
import { type GateChangeBy, recordGateVersion } from './gateVersions.ts';
import { planOf } from './plans.ts';
import {
  effectiveSpending,
  type SpendingCounters,
  type SpendingEnforcement,
  type SpendingPeriod,
  spendingStatusFor,
  storedSpendingOf,
} from './spending.ts';

export const gateListQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.uuid('must be a cursor from a previous page').optional(),
  tag: z.string().min(1).refine(isStorableText, STORABLE_TEXT_MESSAGE).optional(),
  taskType: z.enum(TASK_TYPES).optional(),
});

export type Page<T> = { items: T[]; nextCursor: string | null; hasMore: boolean; limit: number };

/** A stored gate's settable fields as the REST JSON shows them (money as numbers). */
export function settingsOf(gate: Gate): GateSettings {
  return {
    name: gate.name,
    description: gate.description,
    autoEnhanceDescription: gate.autoEnhanceDescription,
    taskType: gate.taskType as GateSettings['taskType'],
    taskSubtype: gate.taskSubtype as GateSettings['taskSubtype'],
    tags: gate.tags,
    model: gate.model,
    routingStrategy: gate.routingStrategy as GateSettings['routingStrategy'],
    fallbackModels: gate.fallbackModels,
    systemPrompt: gate.systemPrompt,
    temperature: gate.temperature,
    maxTokens: gate.maxTokens,
    topP: gate.topP,
    allowOverrides: gate.allowOverrides as GateSettings['allowOverrides'],
    strictHostedTools: gate.strictHostedTools,
    costWeight: gate.costWeight,
    latencyWeight: gate.latencyWeight,
    qualityWeight: gate.qualityWeight,
    analysisMethod: gate.analysisMethod as GateSettings['analysisMethod'],
    maxCostPer1kTokens: gate.maxCostPer1kTokens,
    maxLatencyMs: gate.maxLatencyMs,
    reanalysisPeriod: gate.reanalysisPeriod as GateSettings['reanalysisPeriod'],
    autoApplyRecommendations: gate.autoApplyRecommendations,
    responseFormatEnabled: gate.responseFormatEnabled,
    responseFormatType: gate.responseFormatType as GateSettings['responseFormatType'],
    responseFormatSchema: gate.responseFormatSchema as GateSettings['responseFormatSchema'],
    spendingLimit: gate.spendingLimit === null ? null : Number(gate.spendingLimit),
    spendingLimitPeriod: gate.spendingLimitPeriod as SpendingPeriod,
    spendingEnforcement: gate.spendingEnforcement as SpendingEnforcement,
    spendingAlertWebhook: gate.spendingAlertWebhook,
    endUserSpendingLimit: gate.endUserSpendingLimit === null ? null : Number(gate.endUserSpendingLimit),
    endUserSpendingLimitPeriod: gate.endUserSpendingLimitPeriod as SpendingPeriod,
    rateLimitRpm: gate.rateLimitRpm,
    rateLimitTpm: gate.rateLimitTpm,
    gateType: gate.gateType as GateSettings['gateType'],
    agentMode: gate.agentMode as GateSettings['agentMode'],
    orchestration: gate.orchestration as GateSettings['orchestration'],
    sessionSpendingLimit: gate.sessionSpendingLimit === null ? null : Number(gate.sessionSpendingLimit),
    sessionIdleMinutes: gate.sessionIdleMinutes,
    maxRequestsPerSession: gate.maxRequestsPerSession,
    visibleTools: gate.visibleTools as string[] | null,
  };
}

/**
 * Why a response schema the input sends cannot be used, as a field issue. Compiled now, so a
 * schema that never can be (a $ref to a URL, a pattern RE2 cannot run) is refused here instead of
 * failing every request through the gate; and compiled before any transaction opens, so that its
 * time never holds a transaction or a locked row.
 */
function schemaIssues(schema: GatePatch['responseFormatSchema']): FieldIssue[] {
  const problem = schema == null ? null : responseSchemaProblem(schema);
  return problem ? [{ path: 'responseFormatSchema', message: problem }] : [];
}

/** Every rule a gate must satisfy as a whole, including the catalog's; its schema: schemaIssues. */
function gateIssues(gate: GateSettings, sent: readonly string[]): FieldIssue[] {
  return [...crossFieldIssues(gate, sent), ...modelIssues(gate)];
}

/** The catalog's word on a gate's models: each must exist and serve its task type. */
function modelIssues(gate: Pick<GateSettings, 'model' | 'fallbackModels' | 'taskType'>): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const primary = modelProblem(gate.model, gate.taskType);
  if (primary) issues.push({ path: 'model', message: primary });
  gate.fallbackModels.forEach((model, i) => {
    const problem = modelProblem(model, gate.taskType);
    if (problem) issues.push({ path: `fallbackModels.${i}`, message: problem });
  });
  return issues;
}

/**
 * The input's model names as the `provider/model` ids a gate stores: a user may write
 * `gpt-4o-mini`, and reads back `openai/gpt-4o-mini`. Names that resolve to nothing, or to
 * several providers, are issues of their fields.
 */
function withModelIds<T extends Partial<Pick<GateSettings, 'model' | 'fallbackModels'>>>(
  input: T,
  models: ModelNames,
): T {
  const issues: FieldIssue[] = [];
  const idOf = (name: string, path: string) => {
    const resolved = models.resolve(name);
    if (resolved.ok) return resolved.id;
    issues.push({ path, message: resolved.message });
    return name;
  };
  const out = { ...input };
  if (input.model !== undefined) out.model = idOf(input.model, 'model');
  if (input.fallbackModels !== undefined) {
    out.fallbackModels = input.fallbackModels.map((m, i) => idOf(m, `fallbackModels.${i}`));
  }
  if (issues.length > 0) throw new ValidationError(issues);
  return out;
}

/** The gate type and agent fields of settled settings: written whole, as settling may change them. */
function agentPart(settings: GateSettings): GatePatch {
  return Object.fromEntries(['gateType', ...AGENT_FIELDS].map((f) => [f, settings[f as keyof GateSettings]]));
}

/** Prisma data for the given settings: JSON nulls spelled as Prisma wants them. */
function toData(patch: GatePatch) {
  const { allowOverrides, responseFormatSchema, visibleTools, ...rest } = patch;
  return {
    ...rest,
    ...(visibleTools !== undefined && {
      visibleTools: visibleTools === null ? Prisma.DbNull : visibleTools,
    }),
    ...(allowOverrides !== undefined && { allowOverrides }),
    ...(responseFormatSchema !== undefined && {
      responseFormatSchema:
        responseFormatSchema === null ? Prisma.DbNull : (responseFormatSchema as Prisma.InputJsonObject),
    }),
  };
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}

const nameTaken = () => new ConflictError('You have a gate with this name already', 'name');

/** What the gate rules read besides the database: spending counters, and how model names resolve. */
export type { GateChangeBy } from './gateVersions.ts';

export type GateDeps = {
  spending: SpendingCounters;
  models: ModelNames;
  /** The Architect's description reader, for autoEnhanceDescription (absent: the rules read). */
  architect?: { reader: ModelReader | null };
};

export async function createGate(
  userId: string,
  raw: unknown,
  deps: Pick<GateDeps, 'models' | 'architect'>,
): Promise<Gate> {
  const parsed = parseGateInput(raw, 'create');
  if (!parsed.ok) throw new ValidationError(parsed.issues);
  const input = await withEnhancedDescription(
    userId,
    withModelIds(parsed.value, deps.models),
    null,
    deps.architect?.reader ?? null,
    LIMITS.descriptionLength,
  );
  const settings = settleGateSettings<GateSettings>({ ...GATE_DEFAULTS, ...input }, input);
  const issues = [...gateIssues(settings, Object.keys(input)), ...schemaIssues(input.responseFormatSchema)];
  if (issues.length > 0) throw new ValidationError(issues);
  try {
    const created = await transaction(async (tx) => {
      // Locks the owner's row so concurrent creations cannot pass the plan limit together.
      const [owner] = await tx.$queryRaw<{ plan: string }[]>`
        SELECT plan FROM users WHERE id = ${userId}::uuid FOR UPDATE`;
      const plan = planOf(owner?.plan ?? 'free');
      if (plan.maxGates !== null && (await tx.gate.count({ where: { userId } })) >= plan.maxGates) {
        throw new PlanLimitError(
          `The ${plan.name} plan allows ${plan.maxGates} gates; delete one or upgrade to create more`,
          plan.maxGates,
        );
      }
      const { name, model, taskType } = input;
      // A block limit of 0 admits nothing: such a gate starts suspended.
      const spendingStatus = spendingStatusFor({ ...settings, spendingCurrent: 0 });
      const gate = await tx.gate.create({
        data: {
          ...toData({ ...input, ...agentPart(settings) }),
          name,
          model,
          taskType,
          userId,
          spendingStatus,
        },
      });
      await recordGateVersion(tx, {
        gateId: gate.id,
        userId,
        by: { kind: 'user' },
        before: null,
        after: settingsOf(gate),
        setFields: Object.keys(input),
      });
      return gate;
    });
    await publish({ kind: 'gate', userId, gateId: created.id });
    return created;
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken();
    throw error;
  }
}

/** The caller's gate; another user's gate is indistinguishable from a missing one. */
/** Where a page of gates starts and which way it runs; `cursor` is a gate id from a previous page. */
export type GateWindow = {
  size: number;
  direction: 'forward' | 'backward';
  cursor?: string | undefined;
  /** The input field that carried the cursor, named when it is refused. */
  cursorField: string;
  tag?: string | undefined;
  taskType?: string | undefined;
};

/**
 * Up to `size` of the owner's gates, newest first: those after the cursor (forward) or before it
 * (backward), and whether more lie beyond them in that direction. A cursor must be one of the
 * owner's gates: anything else would page through someone else's order, or reach the database
 * as a malformed id.
 */
export async function gatesPage(userId: string, w: GateWindow): Promise<{ items: Gate[]; more: boolean }> {
  const { cursor } = w;
  if (cursor !== undefined) {
    const own =
      isUuid(cursor) &&
      (await prisma.gate.findFirst({ where: { id: cursor, userId }, select: { id: true } }));
    if (!own) {
      throw new ValidationError([{ path: w.cursorField, message: 'must be a cursor from a previous page' }]);
    }
  }
  const rows = await prisma.gate.findMany({
    where: { userId, ...(w.tag && { tags: { has: w.tag } }), ...(w.taskType && { taskType: w.taskType }) },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: w.direction === 'forward' ? w.size + 1 : -(w.size + 1),
    ...(cursor !== undefined && { cursor: { id: cursor }, skip: 1 }),
  });
  const more = rows.length > w.size;
  if (!more) return { items: rows, more };
  return { items: w.direction === 'forward' ? rows.slice(0, w.size) : rows.slice(1), more };
}

export async function listGates(userId: string, rawQuery: unknown): Promise<Page<Gate>> {
  const { limit, cursor, tag, taskType } = parseWith(gateListQuerySchema, rawQuery);
  const { items, more } = await gatesPage(userId, {
    size: limit,
    direction: 'forward',
    cursor,
    cursorField: 'cursor',
    tag,
    taskType,
  });
  return { items, hasMore: more, limit, nextCursor: more ? (items.at(-1)?.id ?? null) : null };
}

/** The rules a change must pass on the gate as it would be stored, besides the shared ones. */
async function updateIssues(
  tx: Prisma.TransactionClient,
  existing: Gate,
  settings: GateSettings,
  sent: readonly string[],
): Promise<FieldIssue[]> {
  const issues = gateIssues(settings, sent);
  if (
    existing.gateType === 'agent' &&
    settings.gateType === 'standard' &&
    (await tx.subGate.count({ where: { agentGateId: existing.id } })) > 0
  ) {
    issues.push({
      path: 'gateType',
      message: 'cannot become standard while sub-gates are attached; detach them first',
    });
  }
  return issues;
}

/** A change made only to the gate as it was (`onlyIf`) found it changed meanwhile: nothing was written. */
export class GateChangedMeanwhile extends Error {
  constructor() {
    super('The gate changed meanwhile');
  }
}

/**
 * Changes the caller's gate and records the change as a version (gateVersions.ts), in one
 * transaction holding the gate row's lock: concurrent changes apply one after the other, each
 * checked against and compared with the gate as the previous one left it. `by` says who changes
 * it: the owner (default), the Architect's auto-apply, or a rollback (gateHistory.ts). `onlyIf`
 * is checked on the locked row in that transaction: false, and nothing is written
 * (GateChangedMeanwhile); the Architect's auto-apply uses it so that a change the owner made
 * after the analysis read the gate is never overwritten.
 */
export async function updateGate(
  userId: string,
  id: string,
  raw: unknown,
  deps: GateDeps,
  by: GateChangeBy = { kind: 'user' },
  onlyIf?: (current: Gate) => boolean,
): Promise<Gate> {
  const parsed = parseGateInput(raw, 'update');
  const current = await getGate(userId, id);
  if (!parsed.ok) throw new ValidationError(parsed.issues);
  const named = withModelIds(parsed.value, deps.models);
  // A rollback restores the version's description as it was: enhancing it again could change it.
  const input =
    by.kind === 'rollback'
      ? named
      : await withEnhancedDescription(
          userId,
          named,
          current,
          deps.architect?.reader ?? null,
          LIMITS.descriptionLength,
        );
  // The stored schema was checked when it was saved; only a new one is compiled.
  const refused = schemaIssues(input.responseFormatSchema);
  if (refused.length > 0) throw new ValidationError(refused);
  const spendingTouched =
    input.spendingLimit !== undefined ||
    input.spendingEnforcement !== undefined ||
    input.spendingLimitPeriod !== undefined;
  try {
    const updated = await transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM gates WHERE id = ${id}::uuid FOR UPDATE`;
      const existing = await tx.gate.findFirst({ where: { id, userId } });
      if (!existing) throw new NotFoundError('Gate'); // deleted meanwhile
      if (onlyIf && !onlyIf(existing)) throw new GateChangedMeanwhile();
      const before = settingsOf(existing);
      const settings = settleGateSettings(before, input);
      const issues = await updateIssues(tx, existing, settings, Object.keys(input));
      if (issues.length > 0) throw new ValidationError(issues);
      const data = toData({ ...input, ...agentPart(settings) });
      const gate = await tx.gate.update({ where: { id: existing.id }, data });
      await recordGateVersion(tx, { gateId: gate.id, userId, by, before, after: settingsOf(gate) });
      return gate;
    });
    if (spendingTouched) {
      // A changed limit, enforcement or period takes effect at once.
      await deps.spending.settingsChanged(updated.id);
    }
    // Published after the write, so a request reading meanwhile cannot cache the old gate.
    await publish({ kind: 'gate', userId, gateId: updated.id });
    return spendingTouched ? await prisma.gate.findUniqueOrThrow({ where: { id: updated.id } }) : updated;
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken();
    throw error;
  }
}

/**
 * Deletes the gate; the sub_gates rows that attach it to agent gates (and its own sub-gates, and
 * its sessions) go in the same statement, through their ON DELETE CASCADE foreign keys.
 */
export async function deleteGate(userId: string, id: string): Promise<void> {
  const gate = await getGate(userId, id);
  await prisma.gate.delete({ where: { id: gate.id } });
  await publish({ kind: 'gate', userId, gateId: gate.id });
}

/** A gate as the domain knows it: settings typed, money as numbers, spending as of `now`. */
export function gateState(gate: Gate, spending: SpendingCounters, now = new Date()) {
  const settings = settingsOf(gate);
  const held = spending.held(gate.id) ?? storedSpendingOf(gate);
  const current = effectiveSpending(
    {
      spendingLimitPeriod: settings.spendingLimitPeriod,
      spendingPeriodStart: held.periodStart,
      spendingCurrent: held.current,
    },
    now,
  );
  return {
    id: gate.id,
    userId: gate.userId,
    ...settings,
    taskAnalysis: gate.taskAnalysis,
    spendingCurrent: current.current,
    spendingPeriodStart: current.periodStart,
    spendingResetsAt: current.resetsAt,
    spendingStatus: spendingStatusFor({ ...settings, spendingCurrent: current.current }),
    requestWorstCaseUsd: gateRequestWorstCase(settings),
    createdAt: gate.createdAt,
    updatedAt: gate.updatedAt,
  };
}

export type GateState = ReturnType<typeof gateState>;

/** The settings one request's worst case depends on: what a gate form asks before it is saved. */
const worstCaseInputSchema = z.strictObject({
  taskType: gateFieldSchemas.taskType,
  model: gateFieldSchemas.model,
  fallbackModels: gateFieldSchemas.fallbackModels.default([]),
  maxTokens: gateFieldSchemas.maxTokens.default(null),
  systemPrompt: gateFieldSchemas.systemPrompt.default(null),
  responseFormatEnabled: gateFieldSchemas.responseFormatEnabled.default(false),
  responseFormatType: gateFieldSchemas.responseFormatType.default('text'),
  responseFormatSchema: gateFieldSchemas.responseFormatSchema.default(null),
});

/**
 * One request's least worst case (USD) on a gate with these settings, saved or not: the rule a
 * saved gate's requestWorstCaseUsd follows (gateRequestWorstCase), after the same checks and
 * model-name resolution as a gate's. Null for task types priced by their input.
 */
export function requestWorstCase(raw: unknown, models: ModelNames): number | null {
  const parsed = parseWith(worstCaseInputSchema, raw);
  const named = withModelIds(parsed, models);
  const issues = modelIssues(named);
  if (issues.length > 0) throw new ValidationError(issues);
  return gateRequestWorstCase(named);
}
