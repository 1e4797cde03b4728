/**
 * The Architect in GraphQL (issue 14): Gate.analysis (the stored taskAnalysis, typed), and the
 * suggestModels and analyseGate mutations. The same domain functions as REST.
 */
import type { ModelScore, TaskAnalysis } from '@gatehouse/rules/architect';
import { type Analysis, analyseGate, suggestModels } from '../../domain/architect.ts';
import { NotFoundError, ValidationError } from '../../domain/errors.ts';
import type { Gate } from '../../generated/prisma/client.ts';
import { builder } from '../builder.ts';
import { type GraphQLContext, requireActor } from '../context.ts';
import { AnalysisMethod, TaskSubtype, TaskType } from './enums.ts';
import { GateRef } from './gate.ts';

const WeightsRef = builder.objectRef<TaskAnalysis['weights']>('ArchitectWeights').implement({
  description: 'The weights the score used, summing to 1',
  fields: (t) => ({
    cost: t.exposeFloat('cost'),
    latency: t.exposeFloat('latency'),
    quality: t.exposeFloat('quality'),
  }),
});

const ScoreRef = builder.objectRef<ModelScore>('ModelScore').implement({
  description:
    'One model’s figures in an analysis: scores 0–1 among the models that passed the filters, and the facts behind them',
  fields: (t) => ({
    model: t.exposeString('model'),
    cost: t.exposeFloat('cost'),
    latency: t.exposeFloat('latency'),
    quality: t.exposeFloat('quality'),
    reliability: t.exposeFloat('reliability', {
      description: '(1 − the error rate seen)², the rate smoothed towards 2 %',
    }),
    total: t.exposeFloat('total'),
    excludedBecause: t.exposeString('excludedBecause', { nullable: true }),
    costPerUnit: t.float({ nullable: true, resolve: (s) => s.facts.costPerUnit }),
    costUnit: t.string({ resolve: (s) => s.facts.costUnit }),
    costSource: t.string({ resolve: (s) => s.facts.costSource }),
    latencyMs: t.int({ nullable: true, resolve: (s) => s.facts.latencyMs }),
    latencySource: t.string({ resolve: (s) => s.facts.latencySource }),
    qualityScore: t.float({ nullable: true, resolve: (s) => s.facts.quality }),
    qualityKind: t.string({ resolve: (s) => s.facts.qualityKind }),
    errorRate: t.float({ nullable: true, resolve: (s) => s.facts.errorRate }),
    samples: t.int({ resolve: (s) => s.facts.samples }),
  }),
});

const TaskAnalysisRef = builder.objectRef<TaskAnalysis>('TaskAnalysis').implement({
  description: 'The Architect’s recommendation, with every number behind it',
  fields: (t) => ({
    taskType: t.expose('taskType', { type: TaskType }),
    taskSubtype: t.field({ type: TaskSubtype, nullable: true, resolve: (a) => a.taskSubtype ?? null }),
    primary: t.exposeString('primary', { nullable: true }),
    alternatives: t.exposeStringList('alternatives'),
    fallbacks: t.exposeStringList('fallbacks'),
    reasoning: t.exposeString('reasoning'),
    scores: t.field({ type: [ScoreRef], resolve: (a) => a.scores }),
    weights: t.field({ type: WeightsRef, resolve: (a) => a.weights }),
    requiredCapabilities: t.exposeStringList('requiredCapabilities'),
    readBy: t.exposeString('readBy', { description: '"model" (GATEHOUSE_ARCHITECT_MODEL) or "rules"' }),
    windowSince: t.field({ type: 'DateTime', resolve: (a) => new Date(a.window.since) }),
    windowUntil: t.field({ type: 'DateTime', resolve: (a) => new Date(a.window.until) }),
    windowScope: t.string({
      description: '"gate" (its own traffic) or "account"',
      resolve: (a) => a.window.scope,
    }),
    analysedAt: t.field({ type: 'DateTime', resolve: (a) => new Date(a.analysedAt) }),
  }),
});

type AnalysisResult = Analysis & { gate?: Gate };

const AnalysisRef = builder.objectRef<AnalysisResult>('ArchitectAnalysis').implement({
  fields: (t) => ({
    taskAnalysis: t.field({ type: TaskAnalysisRef, resolve: (a) => a.taskAnalysis }),
    enhancedDescription: t.string({ nullable: true, resolve: (a) => a.enhancedDescription ?? null }),
    gate: t.field({
      type: GateRef,
      nullable: true,
      description: 'The analysed gate, its analysis stored',
      resolve: (a) => a.gate ?? null,
    }),
  }),
});

builder.objectFields(GateRef, (t) => ({
  analysis: t.field({
    type: TaskAnalysisRef,
    nullable: true,
    description: 'The Architect’s latest analysis of this gate, typed (taskAnalysis is the same as JSON)',
    resolve: (g) => (g.taskAnalysis as TaskAnalysis | null) ?? null,
  }),
}));

const SuggestionInput = builder.inputType('SuggestionInput', {
  fields: (t) => ({
    description: t.string({ required: true }),
    taskType: t.field({ type: TaskType }),
    taskSubtype: t.field({ type: TaskSubtype }),
    costWeight: t.float(),
    latencyWeight: t.float(),
    qualityWeight: t.float(),
    analysisMethod: t.field({ type: AnalysisMethod }),
    maxCostPer1kTokens: t.float(),
    maxLatencyMs: t.int(),
    availableProviders: t.stringList(),
    enableDescriptionEnhancement: t.boolean(),
    windowDays: t.int({ description: 'Days of traffic to read (default 7, at most 90)' }),
  }),
});

const AnalysisOptionsInput = builder.inputType('AnalysisOptionsInput', {
  fields: (t) => ({
    availableProviders: t.stringList(),
    enableDescriptionEnhancement: t.boolean(),
    windowDays: t.int(),
  }),
});

/** GraphQL's absent and null both mean "not given" here, as the REST body's absent field does. */
const given = (input: Record<string, unknown> | null | undefined) =>
  Object.fromEntries(Object.entries(input ?? {}).filter(([, v]) => v !== null && v !== undefined));

const architectOf = (ctx: GraphQLContext) => ({ ...ctx.architect, configured: ctx.models.configured });

builder.mutationFields((t) => ({
  suggestModels: t.field({
    type: AnalysisRef,
    description: 'A recommendation for a gate to be, from its description and the weights and caps given',
    errors: { types: [ValidationError] },
    args: { input: t.arg({ type: SuggestionInput, required: true }) },
    resolve: (_root, { input }, ctx) =>
      suggestModels(requireActor(ctx).user.id, given(input), architectOf(ctx)),
  }),
  analyseGate: t.field({
    type: AnalysisRef,
    description: 'Analyses one of your gates with its settings and its own traffic, and stores the result',
    errors: { types: [ValidationError, NotFoundError] },
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: AnalysisOptionsInput }) },
    resolve: (_root, { id, input }, ctx) =>
      analyseGate(requireActor(ctx).user.id, String(id), given(input), architectOf(ctx)),
  }),
}));
