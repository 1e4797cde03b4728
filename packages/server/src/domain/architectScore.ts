/**
 * The Architect's choice, as plain arithmetic over facts (no database, no I/O):
 * 1. hard filters, each with its reason: deprecated, a needed capability the catalog says the
 *    model lacks, over the cost cap, over the latency cap (observed p95 with enough samples, the
 *    catalog's figure otherwise; no figure at all cannot pass a cap);
 * 2. a score per model among those left, normalised per task type: cost and latency on a log
 *    scale (they span orders of magnitude), quality linearly; unknown figures score 0;
 * 3. total = weighted sum × reliability, where reliability is (1 − the error rate seen)², the
 *    rate smoothed towards a 2 % prior so a handful of requests cannot move it much. Squared:
 *    a failure costs a retry (time and money) and the caller's trust, so 10 % failing costs a
 *    fifth of the score and 30 % about half.
 * Observed figures are blended with the catalog's by sample count (n / (n + 50)): a model with 3
 * requests stays near its catalog figures, one with 3,000 is judged by what it did here.
 */
import {
  MIN_LATENCY_SAMPLES,
  type ModelScore,
  type QualityKind,
  type Weights,
} from '@gatehouse/rules/architect';
import type { TaskType } from '@gatehouse/rules/gate';
import type { Capability } from './architectRead.ts';
import type { ModelFact } from './modelFacts.ts';
import type { ObservedModel } from './modelStats.ts';

/** Samples at which observed figures weigh as much as the catalog's. */
export const PRIOR_SAMPLES = 50;
const ERROR_PRIOR = 0.02;
const ERROR_PRIOR_SAMPLES = 20;
const FALLBACKS = 2;
const ALTERNATIVES = 3;

export type Candidate = { fact: ModelFact; observed: ObservedModel | undefined; deprecated: boolean };

export type ScoreInput = {
  taskType: TaskType;
  qualityKind: QualityKind;
  required: Capability[];
  weights: Weights;
  maxCostPer1kTokens: number | null;
  maxLatencyMs: number | null;
  candidates: Candidate[];
  /** Share of input tokens in the token mix used to price chat (observed, or 0.75). */
  inputShare: number;
};

export type ScoreResult = {
  scores: ModelScore[];
  primary: string | null;
  alternatives: string[];
  fallbacks: string[];
};

const TOKEN_PRICED: ReadonlySet<TaskType> = new Set(['chat', 'embeddings']);

const CAPABILITY_NAMES: Record<Capability, string> = {
  tools: 'tool calling',
  structuredOutput: 'structured output',
  vision: 'image input',
  reasoning: 'reasoning',
};

/** The catalog's price in the unit the task type is billed in. */
function catalogCost(
  fact: ModelFact,
  taskType: TaskType,
  inputShare: number,
): { value: number | null; unit: string } {
  if (TOKEN_PRICED.has(taskType)) {
    const input = fact.inputPricePerMTok;
    const output = taskType === 'embeddings' ? 0 : fact.outputPricePerMTok;
    if (input === null || output === null) return { value: null, unit: '1k tokens' };
    const share = taskType === 'embeddings' ? 1 : inputShare;
    return { value: ((input * share + output * (1 - share)) / 1_000_000) * 1000, unit: '1k tokens' };
  }
  const u = fact.unitPrices;
  if (taskType === 'image' && u.perImage) {
    const prices = Object.values(u.perImage);
    return { value: u.perImage.default ?? Math.min(...(prices as number[])), unit: 'image' };
  }
  if (taskType === 'tts' && u.perMCharacters !== undefined)
    return { value: u.perMCharacters, unit: '1M characters' };
  if ((taskType === 'stt' || taskType === 'audio') && u.perMinute !== undefined)
    return { value: u.perMinute, unit: 'minute' };
  if (taskType === 'video' && u.perSecond !== undefined) return { value: u.perSecond, unit: 'second' };
  if (taskType === 'ocr' && u.perPage !== undefined) return { value: u.perPage, unit: 'page' };
  if (taskType === 'moderation') return { value: 0, unit: 'request' };
  return { value: null, unit: 'request' };
}

const blendWeight = (n: number) => n / (n + PRIOR_SAMPLES);

function blend(catalog: number | null, observed: number | null, n: number) {
  if (observed === null || n === 0)
    return { value: catalog, source: catalog === null ? 'unknown' : 'catalog' } as const;
  if (catalog === null) return { value: observed, source: 'observed' } as const;
  const w = blendWeight(n);
  return { value: catalog * (1 - w) + observed * w, source: 'blended' } as const;
}

/** Higher is better: 1 for the lowest value, 0 for the highest, on a log scale. */
function logScale(values: (number | null)[]): number[] {
  const known = values.filter((v): v is number => v !== null).map((v) => Math.log(v + 1e-9));
  const lo = Math.min(...known);
  const hi = Math.max(...known);
  return values.map((v) => {
    if (v === null) return 0;
    if (hi - lo < 1e-12) return 1;
    return (hi - Math.log(v + 1e-9)) / (hi - lo);
  });
}

/** Higher is better, linearly between the lowest and highest known figure. */
function linearScale(values: (number | null)[]): number[] {
  const known = values.filter((v): v is number => v !== null);
  const lo = Math.min(...known);
  const hi = Math.max(...known);
  return values.map((v) => {
    if (v === null) return 0;
    if (hi - lo < 1e-12) return 1;
    return (v - lo) / (hi - lo);
  });
}

const round = (x: number, digits = 4) => Math.round(x * 10 ** digits) / 10 ** digits;

export function scoreModels(input: ScoreInput): ScoreResult {
  const { taskType, weights } = input;
  type Row = { score: ModelScore; cost: number | null; latency: number | null; provider: string };
  const rows: Row[] = input.candidates.map(({ fact, observed, deprecated }) => {
    const n = observed?.attempts ?? 0;
    const catalog = catalogCost(fact, taskType, input.inputShare);
    // Observed cost is priced from the catalog here too: a model with no price has no cost figure.
    const cost =
      TOKEN_PRICED.has(taskType) && catalog.value !== null
        ? blend(catalog.value, observed?.costPer1kTokens ?? null, observed?.answered ?? 0)
        : ({ value: catalog.value, source: catalog.value === null ? 'unknown' : 'catalog' } as const);
    // Observed latency counts once enough was seen; below that it only moves a catalog figure.
    const seenEnough = observed !== undefined && n >= MIN_LATENCY_SAMPLES && observed.p95Ms !== null;
    const latency =
      fact.typicalLatencyMs !== null || seenEnough
        ? blend(fact.typicalLatencyMs, observed?.p95Ms ?? null, n)
        : ({ value: null, source: 'unknown' } as const);
    // The cap is held to what was seen when enough was seen, to the catalog otherwise.
    const capLatency = seenEnough
      ? { value: observed.p95Ms as number, what: `observed p95 over ${n} attempts` }
      : fact.typicalLatencyMs !== null
        ? { value: fact.typicalLatencyMs, what: 'catalog typical latency' }
        : null;
    const quality = fact.quality[input.qualityKind];
    const errorRate = n > 0 ? (observed?.errors ?? 0) / n : null;
    const smoothedErrors =
      ((observed?.errors ?? 0) + ERROR_PRIOR * ERROR_PRIOR_SAMPLES) / (n + ERROR_PRIOR_SAMPLES);
    let excludedBecause: string | undefined;
    const lacking = input.required.filter((c) => fact.capabilities[c] === false);
    if (deprecated) excludedBecause = 'deprecated by its provider';
    else if (lacking.length > 0)
      excludedBecause = `lacks ${lacking.map((c) => CAPABILITY_NAMES[c]).join(' and ')}, which the description needs`;
    else if (input.maxCostPer1kTokens !== null && TOKEN_PRICED.has(taskType)) {
      if (cost.value === null) excludedBecause = 'has no known price to hold against the cost cap';
      else if (cost.value > input.maxCostPer1kTokens)
        excludedBecause = `costs $${fmt(cost.value)} per 1k tokens, over the $${fmt(input.maxCostPer1kTokens)} cap`;
    }
    if (!excludedBecause && input.maxLatencyMs !== null) {
      if (!capLatency) excludedBecause = 'has no latency figure to hold against the latency cap';
      else if (capLatency.value > input.maxLatencyMs)
        excludedBecause = `${capLatency.what} is ${Math.round(capLatency.value)} ms, over the ${input.maxLatencyMs} ms cap`;
    }
    const score: ModelScore = {
      model: fact.id,
      cost: 0,
      latency: 0,
      quality: 0,
      reliability: round((1 - smoothedErrors) ** 2),
      total: 0,
      ...(excludedBecause && { excludedBecause }),
      facts: {
        costPerUnit: cost.value === null ? null : round(cost.value, 8),
        costUnit: catalog.unit,
        costSource: cost.source,
        latencyMs: latency.value === null ? null : Math.round(latency.value),
        latencySource: latency.source === 'observed' ? 'observed p95' : latency.source,
        quality,
        qualityKind: input.qualityKind,
        errorRate: errorRate === null ? null : round(errorRate),
        samples: n,
      },
    };
    return { score, cost: cost.value, latency: latency.value, provider: fact.provider };
  });

  const passing = rows.filter((r) => !r.score.excludedBecause);
  const costScores = logScale(passing.map((r) => r.cost));
  const latencyScores = logScale(passing.map((r) => r.latency));
  const qualityScores = linearScale(passing.map((r) => r.score.facts.quality));
  passing.forEach((r, i) => {
    const s = r.score;
    s.cost = round(costScores[i] as number);
    s.latency = round(latencyScores[i] as number);
    s.quality = round(qualityScores[i] as number);
    s.total = round(
      (weights.cost * s.cost + weights.latency * s.latency + weights.quality * s.quality) * s.reliability,
    );
  });
  const byTotal = (a: Row, b: Row) =>
    b.score.total - a.score.total ||
    (a.cost ?? Number.POSITIVE_INFINITY) - (b.cost ?? Number.POSITIVE_INFINITY) ||
    a.score.model.localeCompare(b.score.model);
  passing.sort(byTotal);
  const excluded = rows
    .filter((r) => r.score.excludedBecause)
    .sort((a, b) => a.score.model.localeCompare(b.score.model));
  const primary = passing[0];
  const rest = passing.slice(1);
  // Fallbacks: another provider first, so one provider's outage is covered.
  const fallbacks = [
    ...rest.filter((r) => r.provider !== primary?.provider),
    ...rest.filter((r) => r.provider === primary?.provider),
  ]
    .slice(0, FALLBACKS)
    .map((r) => r.score.model);
  return {
    scores: [...passing, ...excluded].map((r) => r.score),
    primary: primary?.score.model ?? null,
    alternatives: rest.slice(0, ALTERNATIVES).map((r) => r.score.model),
    fallbacks,
  };
}

/** A dollar figure with its significant digits, never in exponent notation. */
export function fmt(usd: number): string {
  if (usd === 0) return '0';
  if (usd >= 1) return usd.toFixed(2);
  return usd.toFixed(Math.min(10, 2 - Math.floor(Math.log10(usd)) + 1)).replace(/0+$/, '');
}
