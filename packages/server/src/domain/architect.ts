/**
 * The Architect: recommends models for a gate from what it is for (its description, read by
 * architectRead.ts), the catalog's facts (modelFacts.ts), and this gateway's own traffic
 * (modelStats.ts, from the hourly per-model totals), scored by architectScore.ts. Every number a
 * choice rests on is in the analysis (`scores[].facts`) and named in its reasoning.
 *
 * Where candidates come from: the providers named in the request, or else those configured. The
 * built-in mock provider is offered only where it is named, is all there is, or is what the gate
 * already uses: a real deployment is never told to route to it.
 */
import {
  type AnalysisOptions,
  analysisOptionsSchema,
  OBSERVED_WINDOW_DAYS,
  type SuggestionInput,
  suggestionInputSchema,
  type TaskAnalysis,
  weightsOf,
} from '@gatehouse/rules/architect';
import type { TaskType } from '@gatehouse/rules/gate';
import { publish } from '../db/changes.ts';
import { prisma } from '../db/client.ts';
import type { Gate, Prisma } from '../generated/prisma/client.ts';
import {
  type Capability,
  type ModelReader,
  qualityKindOf,
  readDescription,
  type TaskSubtype,
} from './architectRead.ts';
import { fmt, scoreModels } from './architectScore.ts';
import { findModel, type ModelNames } from './catalog.ts';
import { parseWith, ValidationError } from './errors.ts';
import { getGate } from './gateCache.ts';
import { modelFacts } from './modelFacts.ts';
import { observedModels } from './modelStats.ts';

const DAY_MS = 86_400_000;
const DEFAULT_INPUT_SHARE = 0.75;

export type ArchitectDeps = {
  models: ModelNames;
  /** Reads descriptions with GATEHOUSE_ARCHITECT_MODEL; null: the rules read them. */
  reader: ModelReader | null;
  now?: () => Date;
};

export type Analysis = { taskAnalysis: TaskAnalysis; enhancedDescription?: string };

type Request = {
  description: string;
  taskType?: TaskType | undefined;
  taskSubtype?: TaskSubtype | null | undefined;
  weights: NonNullable<ReturnType<typeof weightsOf>>;
  maxCostPer1kTokens: number | null;
  maxLatencyMs: number | null;
  providers: string[];
  /** Capabilities the gate's own settings need, whatever its description says. */
  settingsNeed: Capability[];
  windowDays: number;
  gateId?: string;
  /** The gate's current primary, for the comparison in the reasoning. */
  current?: string;
  enhance: boolean;
};

/** Which providers the Architect may choose from, mock only where it belongs (see above). */
function providersFor(
  named: string[] | undefined,
  configured: ReadonlySet<string>,
  current?: string,
): string[] {
  if (named) return [...new Set(named)];
  const real = [...configured].filter((p) => p !== 'mock');
  const mockIsUsed = current?.startsWith('mock/') ?? false;
  return configured.has('mock') && (real.length === 0 || mockIsUsed) ? [...real, 'mock'] : real;
}

async function analyse(userId: string, r: Request, deps: ArchitectDeps): Promise<Analysis> {
  const reading = await readDescription(
    userId,
    r.description,
    { taskType: r.taskType, taskSubtype: r.taskSubtype },
    deps.reader,
  );
  const { taskType, taskSubtype } = reading;
  const required = taskType === 'chat' ? [...new Set([...reading.capabilities, ...r.settingsNeed])] : [];
  const now = deps.now?.() ?? new Date();
  const since = new Date(now.getTime() - r.windowDays * DAY_MS);
  const observed = await observedModels(userId, { since, until: now, gateId: r.gateId });
  let prompt = 0;
  let completion = 0;
  for (const o of observed.values()) {
    prompt += o.promptTokens;
    completion += o.completionTokens;
  }
  const inputShare = prompt + completion > 0 ? prompt / (prompt + completion) : DEFAULT_INPUT_SHARE;
  const providers = new Set(r.providers);
  const candidates = modelFacts()
    .filter((f) => f.taskTypes.includes(taskType) && providers.has(f.provider))
    .map((fact) => ({
      fact,
      observed: observed.get(fact.id),
      deprecated: findModel(fact.id)?.deprecated ?? false,
    }));
  const qualityKind = qualityKindOf(taskSubtype);
  const result = scoreModels({
    taskType,
    qualityKind,
    required,
    weights: r.weights,
    maxCostPer1kTokens: r.maxCostPer1kTokens,
    maxLatencyMs: r.maxLatencyMs,
    candidates,
    inputShare,
  });
  const taskAnalysis: TaskAnalysis = {
    taskType,
    taskSubtype,
    ...result,
    reasoning: reasoningOf(result, {
      taskType,
      qualityKind,
      required,
      weights: r.weights,
      inputShare,
      observedMix: prompt + completion > 0,
      windowDays: r.windowDays,
      scope: r.gateId ? 'this gate' : 'your gates',
      providers: r.providers,
      candidates: candidates.length,
      current: r.current,
      readBy: reading.readBy,
      ...(reading.modelProblem && { modelProblem: reading.modelProblem }),
    }),
    weights: r.weights,
    requiredCapabilities: required,
    readBy: reading.readBy,
    window: { since: since.toISOString(), until: now.toISOString(), scope: r.gateId ? 'gate' : 'account' },
    analysedAt: now.toISOString(),
  };
  return { taskAnalysis, ...(r.enhance && { enhancedDescription: reading.enhancedDescription }) };
}

type ReasoningContext = {
  taskType: TaskType;
  qualityKind: string;
  required: Capability[];
  weights: { cost: number; latency: number; quality: number };
  inputShare: number;
  observedMix: boolean;
  windowDays: number;
  scope: string;
  providers: string[];
  candidates: number;
  current?: string | undefined;
  readBy: 'rules' | 'model';
  modelProblem?: string;
};

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

function describeScore(s: TaskAnalysis['scores'][number], ctx: ReasoningContext): string {
  const f = s.facts;
  const cost =
    f.costPerUnit === null ? 'no known price' : `$${fmt(f.costPerUnit)} per ${f.costUnit} (${f.costSource})`;
  const latency =
    f.latencyMs === null
      ? 'no latency figure'
      : `${f.latencyMs.toLocaleString('en')} ms (${f.latencySource})`;
  const quality =
    f.quality === null
      ? `no published ${f.qualityKind} quality figure`
      : `quality ${f.quality}/100 (${f.qualityKind})`;
  const errors =
    f.errorRate === null
      ? `no traffic seen on ${ctx.scope} in ${ctx.windowDays} days`
      : `error rate ${pct(f.errorRate)} over ${f.samples.toLocaleString('en')} attempts`;
  return `${s.model} scores ${s.total.toFixed(3)}: ${cost}, ${latency}, ${quality}, ${errors} (reliability ${s.reliability.toFixed(3)})`;
}

function reasoningOf(result: ReturnType<typeof scoreModels>, ctx: ReasoningContext): string {
  const lines: string[] = [];
  const w = ctx.weights;
  lines.push(
    `Task: ${ctx.taskType}; read by ${ctx.readBy === 'model' ? 'the Architect model' : 'the rules'}${ctx.required.length ? `; needs ${ctx.required.join(', ')}` : ''}. Weights: cost ${w.cost.toFixed(2)}, latency ${w.latency.toFixed(2)}, quality ${w.quality.toFixed(2)}.`,
  );
  if (ctx.modelProblem) lines.push(ctx.modelProblem);
  if (ctx.providers.length === 0)
    lines.push('No provider is configured or named, so there is no model to recommend.');
  else if (ctx.candidates === 0)
    lines.push(`No ${ctx.taskType} model in the catalog is served by ${ctx.providers.join(', ')}.`);
  const byModel = new Map(result.scores.map((s) => [s.model, s]));
  const primary = result.primary ? byModel.get(result.primary) : undefined;
  if (primary) lines.push(`Recommended: ${describeScore(primary, ctx)}.`);
  const runnerUp = result.alternatives[0] ? byModel.get(result.alternatives[0]) : undefined;
  if (runnerUp) lines.push(`Next: ${describeScore(runnerUp, ctx)}.`);
  if (ctx.current && ctx.current !== result.primary) {
    const current = byModel.get(ctx.current);
    if (current?.excludedBecause) lines.push(`The current model ${ctx.current} ${current.excludedBecause}.`);
    else if (current) lines.push(`Current model: ${describeScore(current, ctx)}.`);
  }
  if (ctx.taskType === 'chat')
    lines.push(
      `Chat prices are per 1k tokens at ${pct(ctx.inputShare)} input tokens (${ctx.observedMix ? `the mix seen on ${ctx.scope}` : 'an assumed 3:1 mix; no traffic seen yet'}). Latency is p95 where this gateway has seen the model, blended with the catalog's typical figure by sample count (n/(n+50)).`,
    );
  const excluded = result.scores.filter((s) => s.excludedBecause);
  if (excluded.length > 0) {
    const reasons = new Map<string, number>();
    for (const s of excluded) {
      const key = (s.excludedBecause as string).replace(
        /^(costs|observed p95|catalog typical latency).*?(over the .*)$/,
        '$2',
      );
      reasons.set(key, (reasons.get(key) ?? 0) + 1);
    }
    lines.push(
      `${excluded.length} of ${result.scores.length} models excluded: ${[...reasons].map(([why, n]) => `${n} ${why}`).join('; ')}.`,
    );
  }
  if (!primary && ctx.candidates > 0)
    lines.push('No model passes the filters: loosen a cap or a required capability.');
  return lines.join('\n');
}

const gateNeeds = (
  gate: Pick<Gate, 'responseFormatEnabled' | 'responseFormatType' | 'gateType'>,
): Capability[] => [
  ...(gate.responseFormatEnabled && gate.responseFormatType === 'json_schema'
    ? (['structuredOutput'] as const)
    : []),
  ...(gate.gateType === 'agent' ? (['tools'] as const) : []),
];

/** POST /v1/gates/suggestions: a recommendation for a gate not yet made. */
export async function suggestModels(
  userId: string,
  raw: unknown,
  deps: ArchitectDeps & { configured: ReadonlySet<string> },
): Promise<Analysis> {
  const input: SuggestionInput = parseWith(suggestionInputSchema, raw);
  return analyse(
    userId,
    {
      description: input.description,
      taskType: input.taskType,
      taskSubtype: input.taskSubtype,
      weights: weightsOf(input) as NonNullable<ReturnType<typeof weightsOf>>,
      maxCostPer1kTokens: input.maxCostPer1kTokens ?? null,
      maxLatencyMs: input.maxLatencyMs ?? null,
      providers: providersFor(input.availableProviders, deps.configured),
      settingsNeed: [],
      windowDays: input.windowDays ?? OBSERVED_WINDOW_DAYS.default,
      enhance: input.enableDescriptionEnhancement ?? true,
    },
    deps,
  );
}

/**
 * Analyses a stored gate with its own settings and traffic, and stores the result as its
 * taskAnalysis (not a new version of the gate: no setting changed).
 */
export async function analyseGate(
  userId: string,
  gateId: string,
  raw: unknown,
  deps: ArchitectDeps & { configured: ReadonlySet<string> },
): Promise<Analysis & { gate: Gate }> {
  const options = parseWith(analysisOptionsSchema, raw ?? {});
  const gate = await getGate(userId, gateId);
  const analysis = await analyseStoredGate(gate, options, deps);
  const stored = await storeAnalysis(gate, analysis.taskAnalysis);
  return { ...analysis, gate: stored };
}

export async function analyseStoredGate(
  gate: Gate,
  options: AnalysisOptions,
  deps: ArchitectDeps & { configured: ReadonlySet<string> },
): Promise<Analysis> {
  const weights = weightsOf({
    analysisMethod: gate.analysisMethod as never,
    costWeight: gate.costWeight,
    latencyWeight: gate.latencyWeight,
    qualityWeight: gate.qualityWeight,
  });
  if (!weights) {
    throw new ValidationError([
      {
        path: 'costWeight',
        message: "the gate's custom weights are all 0: give cost, latency or quality a weight",
      },
    ]);
  }
  return analyse(
    gate.userId,
    {
      // No description: the gate's name says what it is for, as far as anything does.
      description: gate.description?.trim() || gate.name,
      taskType: gate.taskType as TaskType,
      taskSubtype: gate.taskSubtype as TaskSubtype | null,
      weights,
      maxCostPer1kTokens: gate.maxCostPer1kTokens,
      maxLatencyMs: gate.maxLatencyMs,
      providers: providersFor(options.availableProviders, deps.configured, gate.model),
      settingsNeed: gateNeeds(gate),
      windowDays: options.windowDays ?? OBSERVED_WINDOW_DAYS.default,
      gateId: gate.id,
      current: gate.model,
      enhance: options.enableDescriptionEnhancement ?? true,
    },
    deps,
  );
}

export async function storeAnalysis(gate: Gate, analysis: TaskAnalysis): Promise<Gate> {
  const stored = await prisma.gate.update({
    where: { id: gate.id },
    data: { taskAnalysis: analysis as unknown as Prisma.InputJsonValue },
  });
  await publish({ kind: 'gate', userId: gate.userId, gateId: gate.id });
  return stored;
}
