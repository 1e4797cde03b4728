import { z } from 'zod';
import {
  ConflictError,
  NotFoundError,
  PlanLimitError,
  parseWith,
  ServiceUnavailableError,
  ValidationError,
} from '../../domain/errors.ts';
import { getGate } from '../../domain/gateCache.ts';
import {
  createGate,
  deleteGate,
  type GateState,
  gateListQuerySchema,
  gateState,
  gatesPage,
  requestWorstCase,
  updateGate,
} from '../../domain/gates.ts';
import type { Gate } from '../../generated/prisma/client.ts';
import { userInput } from '../arguments.ts';
import { builder } from '../builder.ts';
import { countRows, type GraphQLContext, requireActor } from '../context.ts';
import {
  AgentMode,
  AnalysisMethod,
  GateType,
  Orchestration,
  ReanalysisPeriod,
  ResponseFormatType,
  RoutingStrategy,
  SpendingEnforcement,
  SpendingPeriod,
  SpendingStatus,
  TaskSubtype,
  TaskType,
} from './enums.ts';

const DEFAULT_PAGE_SIZE = 20;
const pageSize = z.number().int().min(0).max(200).nullish();
const cursor = z.uuid('must be a cursor from a previous page').nullish();

/** The gates connection's arguments; a cursor is a gate id, as REST's `cursor` is. */
const gateConnectionArgs = z
  .object({
    first: pageSize,
    last: pageSize,
    after: cursor,
    before: cursor,
    tag: gateListQuerySchema.shape.tag.nullish(),
    taskType: gateListQuerySchema.shape.taskType.nullish(),
  })
  .superRefine((q, ctx) => {
    for (const [a, b] of [
      ['first', 'last'],
      ['after', 'before'],
      ['first', 'before'],
      ['last', 'after'],
    ] as const) {
      if (q[a] != null && q[b] != null) {
        ctx.addIssue({ code: 'custom', path: [b], message: `cannot be combined with ${a}` });
      }
    }
  });

// The gate's state (settings typed, money as numbers, spending as of now), once per gate object.
const states = new WeakMap<Gate, GateState>();
const state = (gate: Gate, ctx: GraphQLContext) => {
  const cached = states.get(gate);
  if (cached) return cached;
  const fresh = gateState(gate, ctx.spending);
  states.set(gate, fresh);
  return fresh;
};

export const GateRef = builder.prismaObject('Gate', {
  description: 'A stored configuration between an application and model providers',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The gate UUID used in API calls' }),
    name: t.exposeString('name'),
    description: t.exposeString('description', { nullable: true }),
    autoEnhanceDescription: t.exposeBoolean('autoEnhanceDescription'),
    taskType: t.expose('taskType', { type: TaskType }),
    taskSubtype: t.expose('taskSubtype', { type: TaskSubtype, nullable: true }),
    tags: t.exposeStringList('tags'),
    model: t.exposeString('model'),
    routingStrategy: t.expose('routingStrategy', { type: RoutingStrategy }),
    fallbackModels: t.exposeStringList('fallbackModels'),
    systemPrompt: t.exposeString('systemPrompt', { nullable: true }),
    temperature: t.exposeFloat('temperature', { nullable: true }),
    maxTokens: t.exposeInt('maxTokens', { nullable: true }),
    topP: t.exposeFloat('topP', { nullable: true }),
    allowOverrides: t.field({
      type: 'JSON',
      description: 'true, false, or {model, temperature, maxTokens, topP} booleans',
      resolve: (g, _args, ctx) => state(g, ctx).allowOverrides,
    }),
    costWeight: t.exposeFloat('costWeight', { nullable: true }),
    latencyWeight: t.exposeFloat('latencyWeight', { nullable: true }),
    qualityWeight: t.exposeFloat('qualityWeight', { nullable: true }),
    analysisMethod: t.expose('analysisMethod', { type: AnalysisMethod, nullable: true }),
    maxCostPer1kTokens: t.exposeFloat('maxCostPer1kTokens', { nullable: true }),
    maxLatencyMs: t.exposeInt('maxLatencyMs', { nullable: true }),
    reanalysisPeriod: t.expose('reanalysisPeriod', { type: ReanalysisPeriod }),
    autoApplyRecommendations: t.exposeBoolean('autoApplyRecommendations'),
    strictHostedTools: t.exposeBoolean('strictHostedTools', {
      description:
        'Drop-in requests translated for a model of another family: refuse hosted tools it cannot run (400) instead of leaving them out',
    }),
    taskAnalysis: t.field({
      type: 'JSON',
      nullable: true,
      resolve: (g, _args, ctx) => state(g, ctx).taskAnalysis,
    }),
    responseFormatEnabled: t.exposeBoolean('responseFormatEnabled'),
    responseFormatType: t.expose('responseFormatType', { type: ResponseFormatType }),
    responseFormatSchema: t.field({
      type: 'JSON',
      nullable: true,
      resolve: (g, _args, ctx) => state(g, ctx).responseFormatSchema,
    }),
    spendingLimit: t.float({ nullable: true, resolve: (g, _args, ctx) => state(g, ctx).spendingLimit }),
    spendingLimitPeriod: t.expose('spendingLimitPeriod', { type: SpendingPeriod }),
    spendingEnforcement: t.expose('spendingEnforcement', { type: SpendingEnforcement }),
    spendingCurrent: t.float({ resolve: (g, _args, ctx) => state(g, ctx).spendingCurrent }),
    spendingPeriodStart: t.field({
      type: 'DateTime',
      resolve: (g, _args, ctx) => state(g, ctx).spendingPeriodStart,
    }),
    spendingResetsAt: t.field({
      type: 'DateTime',
      description: 'When the current period ends and spendingCurrent starts again at zero',
      resolve: (g, _args, ctx) => state(g, ctx).spendingResetsAt,
    }),
    spendingStatus: t.field({
      type: SpendingStatus,
      description: 'SUSPENDED: requests get 402 until the limit is raised or lifted, or the period resets',
      resolve: (g, _args, ctx) => state(g, ctx).spendingStatus,
    }),
    spendingAlertWebhook: t.exposeString('spendingAlertWebhook', {
      nullable: true,
      description:
        "Where a signed alert is sent when an ALERT_ONLY limit is crossed; null: the account's default (Settings), if any",
    }),
    requestWorstCaseUsd: t.float({
      nullable: true,
      description:
        "One request's least worst case (USD): the gate's system prompt and output cap on its dearest model, what a BLOCK limit must cover for any request to pass; null for task types priced by their input",
      resolve: (g, _args, ctx) => state(g, ctx).requestWorstCaseUsd,
    }),
    endUserSpendingLimit: t.float({
      nullable: true,
      description:
        'USD any one end user (x-gatehouse-user, OpenAI’s `user`, Anthropic’s `metadata.user_id`) may spend through the gate per endUserSpendingLimitPeriod; null is no limit',
      resolve: (g, _args, ctx) => state(g, ctx).endUserSpendingLimit,
    }),
    endUserSpendingLimitPeriod: t.expose('endUserSpendingLimitPeriod', { type: SpendingPeriod }),
    rateLimitRpm: t.exposeInt('rateLimitRpm', {
      nullable: true,
      description: 'Requests per minute over a sliding window; null is no limit',
    }),
    rateLimitTpm: t.exposeInt('rateLimitTpm', {
      nullable: true,
      description:
        'Tokens per minute over a sliding window (prompt tokens counted at admission, completion tokens after the answer); null is no limit',
    }),
    gateType: t.expose('gateType', { type: GateType }),
    agentMode: t.expose('agentMode', {
      type: AgentMode,
      nullable: true,
      description: 'Agent gates only: OBSERVABILITY (default) or ORCHESTRATED',
    }),
    orchestration: t.expose('orchestration', {
      type: Orchestration,
      nullable: true,
      description: 'Orchestrated agent gates only: STATIC (default) or DYNAMIC',
    }),
    sessionSpendingLimit: t.float({
      nullable: true,
      description: 'Agent gates: USD one session may spend; null is no limit',
      resolve: (g, _args, ctx) => state(g, ctx).sessionSpendingLimit,
    }),
    sessionIdleMinutes: t.exposeInt('sessionIdleMinutes', {
      description: 'Agent gates: minutes without a request after which a session is idle',
    }),
    maxRequestsPerSession: t.exposeInt('maxRequestsPerSession', { nullable: true }),
    visibleTools: t.stringList({
      nullable: true,
      description: 'Agent gates: the tool names the model is shown; null is every tool',
      resolve: (g, _args, ctx) => state(g, ctx).visibleTools,
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

/** One input for create and update: the shared rules decide what is required and valid. */
const GateInput = builder.inputType('GateInput', {
  description:
    'Gate settings. On create, name, model and taskType are required; on update, send only what changes (null clears)',
  fields: (t) => ({
    name: t.string(),
    description: t.string(),
    autoEnhanceDescription: t.boolean(),
    taskType: t.field({ type: TaskType }),
    taskSubtype: t.field({ type: TaskSubtype }),
    tags: t.stringList(),
    model: t.string(),
    routingStrategy: t.field({ type: RoutingStrategy }),
    fallbackModels: t.stringList(),
    systemPrompt: t.string(),
    temperature: t.float(),
    maxTokens: t.int(),
    topP: t.float(),
    allowOverrides: t.field({ type: 'JSON' }),
    costWeight: t.float(),
    latencyWeight: t.float(),
    qualityWeight: t.float(),
    analysisMethod: t.field({ type: AnalysisMethod }),
    maxCostPer1kTokens: t.float(),
    maxLatencyMs: t.int(),
    reanalysisPeriod: t.field({ type: ReanalysisPeriod }),
    autoApplyRecommendations: t.boolean(),
    strictHostedTools: t.boolean(),
    responseFormatEnabled: t.boolean(),
    responseFormatType: t.field({ type: ResponseFormatType }),
    responseFormatSchema: t.field({ type: 'JSON' }),
    spendingLimit: t.float(),
    spendingLimitPeriod: t.field({ type: SpendingPeriod }),
    spendingEnforcement: t.field({ type: SpendingEnforcement }),
    spendingAlertWebhook: t.string(),
    endUserSpendingLimit: t.float(),
    endUserSpendingLimitPeriod: t.field({ type: SpendingPeriod }),
    rateLimitRpm: t.int(),
    rateLimitTpm: t.int(),
    gateType: t.field({ type: GateType }),
    agentMode: t.field({ type: AgentMode }),
    orchestration: t.field({ type: Orchestration }),
    sessionSpendingLimit: t.float(),
    sessionIdleMinutes: t.int(),
    maxRequestsPerSession: t.int(),
    visibleTools: t.stringList(),
  }),
});

builder.queryFields((t) => ({
  gate: t.field({
    type: GateRef,
    nullable: true,
    description: 'One of your gates by its UUID, or null',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) =>
      getGate(requireActor(ctx).user.id, String(args.id)).catch((error) => {
        if (error instanceof NotFoundError) return null;
        throw error;
      }),
  }),
  gates: t.connection({
    type: GateRef,
    description: 'Your gates, newest first',
    args: {
      tag: t.arg.string(),
      taskType: t.arg({ type: TaskType }),
    },
    resolve: (_root, args, ctx) =>
      userInput(async () => {
        const q = parseWith(gateConnectionArgs, args);
        const backward = q.before != null || q.last != null;
        const size = q.first ?? q.last ?? DEFAULT_PAGE_SIZE;
        countRows(ctx, size);
        const { items, more } = await gatesPage(requireActor(ctx).user.id, {
          size,
          direction: backward ? 'backward' : 'forward',
          cursor: q.after ?? q.before ?? undefined,
          cursorField: q.before != null ? 'before' : 'after',
          tag: q.tag ?? undefined,
          taskType: q.taskType ?? undefined,
        });
        const edges = items.map((node) => ({ node, cursor: node.id }));
        return {
          edges,
          pageInfo: {
            hasNextPage: backward ? q.before != null : more,
            hasPreviousPage: backward ? more : q.after != null,
            startCursor: edges[0]?.cursor ?? null,
            endCursor: edges.at(-1)?.cursor ?? null,
          },
        };
      }),
  }),
  requestWorstCase: t.float({
    nullable: true,
    description:
      "One request's least worst case (USD) on a gate with these settings, saved or not: the rule Gate.requestWorstCaseUsd follows; null for task types priced by their input. Bad settings: BAD_USER_INPUT naming the fields",
    args: {
      taskType: t.arg({ type: TaskType, required: true }),
      model: t.arg.string({ required: true }),
      fallbackModels: t.arg.stringList(),
      maxTokens: t.arg.int(),
      systemPrompt: t.arg.string(),
      responseFormatEnabled: t.arg.boolean(),
      responseFormatType: t.arg({ type: ResponseFormatType }),
      responseFormatSchema: t.arg({ type: 'JSON' }),
    },
    resolve: (_root, args, ctx) => {
      requireActor(ctx);
      return userInput(async () =>
        requestWorstCase(Object.fromEntries(Object.entries(args).filter(([, v]) => v != null)), ctx.models),
      );
    },
  }),
}));

builder.mutationFields((t) => ({
  createGate: t.field({
    type: GateRef,
    errors: { types: [ValidationError, ConflictError, PlanLimitError, ServiceUnavailableError] },
    args: { input: t.arg({ type: GateInput, required: true }) },
    resolve: (_root, { input }, ctx) => createGate(requireActor(ctx).user.id, input, ctx),
  }),
  updateGate: t.field({
    type: GateRef,
    errors: { types: [ValidationError, ConflictError, NotFoundError, ServiceUnavailableError] },
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: GateInput, required: true }) },
    resolve: (_root, { id, input }, ctx) => updateGate(requireActor(ctx).user.id, String(id), input, ctx),
  }),
  deleteGate: t.field({
    type: 'ID',
    description: 'Deletes the gate for good; returns its id',
    errors: { types: [NotFoundError] },
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      await deleteGate(requireActor(ctx).user.id, String(id));
      return String(id);
    },
  }),
}));
