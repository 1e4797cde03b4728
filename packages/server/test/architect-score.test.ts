/**
 * The Architect's arithmetic (architectScore.ts) on a catalog and traffic made for the purpose:
 * each test changes one thing and checks the choice moves the way a user would expect.
 */
import { ANALYSIS_PRESETS, type Weights } from '@gatehouse/rules/architect';
import { describe, expect, it } from 'vitest';
import { type Candidate, type ScoreInput, scoreModels } from '../src/domain/architectScore.ts';
import type { ModelFact } from '../src/domain/modelFacts.ts';
import type { ObservedModel } from '../src/domain/modelStats.ts';

function fact(id: string, over: Partial<ModelFact> = {}): ModelFact {
  return {
    id,
    provider: id.split('/')[0] as string,
    name: id,
    taskTypes: ['chat'],
    inputPricePerMTok: 1,
    outputPricePerMTok: 4,
    unitPrices: {},
    contextWindow: 128_000,
    maxOutputTokens: 16_000,
    capabilities: { tools: true, structuredOutput: true, vision: false, reasoning: false },
    quality: { general: 50, code: 50, reasoning: 50 },
    typicalLatencyMs: 1000,
    sources: ['test'],
    ...over,
  };
}

function observed(model: string, attempts: number, over: Partial<ObservedModel> = {}): ObservedModel {
  return {
    model,
    attempts,
    errors: 0,
    answered: attempts,
    errorRate: 0,
    p50Ms: 500,
    p95Ms: 900,
    meanLatencyMs: 550,
    meanCostUsd: null,
    costPer1kTokens: null,
    promptTokens: 0,
    completionTokens: 0,
    ...over,
  };
}

// cheap: cheapest, slow, weakest; best: dearest, highest quality; quick: fastest, middling.
const CATALOG = [
  fact('acme/cheap', {
    inputPricePerMTok: 0.1,
    outputPricePerMTok: 0.4,
    typicalLatencyMs: 3000,
    quality: { general: 40, code: 30, reasoning: 35 },
  }),
  fact('acme/best', {
    inputPricePerMTok: 10,
    outputPricePerMTok: 40,
    typicalLatencyMs: 2500,
    quality: { general: 95, code: 90, reasoning: 97 },
  }),
  fact('other/quick', {
    inputPricePerMTok: 1,
    outputPricePerMTok: 4,
    typicalLatencyMs: 300,
    quality: { general: 70, code: 60, reasoning: 55 },
  }),
];

function run(over: Partial<ScoreInput> & { weights?: Weights } = {}, seen: ObservedModel[] = []) {
  const candidates: Candidate[] = (
    over.candidates ?? CATALOG.map((f) => ({ fact: f, observed: undefined, deprecated: false }))
  ).map((c) => ({ ...c, observed: seen.find((o) => o.model === c.fact.id) ?? c.observed }));
  return scoreModels({
    taskType: 'chat',
    qualityKind: 'general',
    required: [],
    weights: ANALYSIS_PRESETS.balanced,
    maxCostPer1kTokens: null,
    maxLatencyMs: null,
    inputShare: 0.75,
    ...over,
    candidates,
  });
}

describe('the Architect’s score', () => {
  it('cost weight 1 picks the cheapest model, quality weight 1 the best, latency weight 1 the fastest', () => {
    expect(run({ weights: { cost: 1, latency: 0, quality: 0 } }).primary).toBe('acme/cheap');
    expect(run({ weights: { cost: 0, latency: 0, quality: 1 } }).primary).toBe('acme/best');
    expect(run({ weights: { cost: 0, latency: 1, quality: 0 } }).primary).toBe('other/quick');
  });

  it('a subtype reads its own quality figure', () => {
    const catalog = [
      fact('a/general', { quality: { general: 90, code: 40, reasoning: 50 } }),
      fact('b/coder', { quality: { general: 60, code: 95, reasoning: 50 } }),
    ].map((f) => ({ fact: f, observed: undefined, deprecated: false }));
    const weights = { cost: 0, latency: 0, quality: 1 };
    expect(run({ weights, candidates: catalog }).primary).toBe('a/general');
    expect(run({ weights, candidates: catalog, qualityKind: 'code' }).primary).toBe('b/coder');
  });

  it('a model over the cost cap is never recommended and says why, with the figures', () => {
    // acme/best: 0.75 × $10 + 0.25 × $40 = $17.5 per M tokens = $0.0175 per 1k.
    const result = run({ weights: { cost: 0, latency: 0, quality: 1 }, maxCostPer1kTokens: 0.01 });
    expect(result.primary).toBe('other/quick');
    const best = result.scores.find((s) => s.model === 'acme/best');
    expect(best?.excludedBecause).toBe('costs $0.0175 per 1k tokens, over the $0.01 cap');
    expect(best?.total).toBe(0);
    expect([result.primary, ...result.alternatives, ...result.fallbacks]).not.toContain('acme/best');
  });

  it('the latency cap holds the observed p95 against it once there are enough samples, the catalog figure before', () => {
    const weights = { cost: 0, latency: 0, quality: 1 };
    // The catalog says other/quick answers in 300 ms; here it took 2,400 ms at p95 over 200 attempts.
    const slow = observed('other/quick', 200, { p95Ms: 2400 });
    const result = run(
      {
        weights,
        maxLatencyMs: 2000,
        candidates: CATALOG.slice(1).map((f) => ({ fact: f, observed: undefined, deprecated: false })),
      },
      [slow],
    );
    const quick = result.scores.find((s) => s.model === 'other/quick');
    expect(quick?.excludedBecause).toBe('observed p95 over 200 attempts is 2400 ms, over the 2000 ms cap');
    // acme/best's catalog figure (2,500 ms) is over the cap too: nothing passes.
    expect(result.scores.find((s) => s.model === 'acme/best')?.excludedBecause).toBe(
      'catalog typical latency is 2500 ms, over the 2000 ms cap',
    );
    expect(result.primary).toBeNull();
    // Five slow attempts are not enough to overrule the catalog.
    const few = run({ weights, maxLatencyMs: 2000 }, [observed('other/quick', 5, { p95Ms: 2400 })]);
    expect(few.scores.find((s) => s.model === 'other/quick')?.excludedBecause).toBeUndefined();
  });

  it('a model that fails 30 % of requests drops below one that does not', () => {
    const twins = [fact('a/one'), fact('b/two')].map((f) => ({
      fact: f,
      observed: undefined,
      deprecated: false,
    }));
    const healthy = observed('a/one', 100);
    const failing = observed('b/two', 100, { errors: 30, answered: 70, errorRate: 0.3 });
    const result = run({ candidates: twins }, [healthy, failing]);
    expect(result.primary).toBe('a/one');
    const [one, two] = ['a/one', 'b/two'].map((m) => result.scores.find((s) => s.model === m));
    expect(two?.reliability).toBeLessThan(0.75);
    expect(two?.total).toBeLessThan((one?.total ?? 0) * 0.8);
    expect(two?.facts.errorRate).toBe(0.3);
    // Alphabetical order alone would put b/two second anyway; with the failures swapped, a/one loses.
    const swapped = run({ candidates: twins }, [
      observed('b/two', 100),
      observed('a/one', 100, { errors: 30, answered: 70 }),
    ]);
    expect(swapped.primary).toBe('b/two');
  });

  it('observed figures count by sample size: 3 fast requests do not outrank 3,000 measured ones', () => {
    const pair = [
      fact('a/lucky', { typicalLatencyMs: 2000 }),
      fact('b/proven', { typicalLatencyMs: 2000 }),
    ].map((f) => ({ fact: f, observed: undefined, deprecated: false }));
    const weights = { cost: 0, latency: 1, quality: 0 };
    const lucky = observed('a/lucky', 3, { p95Ms: 100 });
    const proven = observed('b/proven', 3000, { p95Ms: 400 });
    const result = run({ weights, candidates: pair }, [lucky, proven]);
    expect(result.primary).toBe('b/proven');
    const luckyScore = result.scores.find((s) => s.model === 'a/lucky');
    // 3/(3+50) of the way from 2,000 ms to 100 ms.
    expect(luckyScore?.facts.latencyMs).toBe(Math.round(2000 * (50 / 53) + 100 * (3 / 53)));
    expect(luckyScore?.facts.latencySource).toBe('blended');
  });

  it('a model with no catalog price has no cost figure, whatever its traffic, and cannot pass a cost cap', () => {
    const models = [
      fact('a/priced'),
      fact('b/unpriced', { inputPricePerMTok: null, outputPricePerMTok: null }),
    ].map((f) => ({ fact: f, observed: undefined, deprecated: false }));
    // The gateway priced b/unpriced's answers at 0 (no price known): that is not a cost of 0.
    const seen = [observed('b/unpriced', 50, { costPer1kTokens: 0, meanCostUsd: 0 })];
    const result = run(
      { candidates: models, weights: { cost: 1, latency: 0, quality: 0 }, maxCostPer1kTokens: 0.0001 },
      seen,
    );
    expect(result.scores.find((s) => s.model === 'b/unpriced')?.excludedBecause).toBe(
      'has no known price to hold against the cost cap',
    );
    const uncapped = run({ candidates: models, weights: { cost: 1, latency: 0, quality: 0 } }, seen);
    expect(uncapped.primary).toBe('a/priced');
    expect(uncapped.scores.find((s) => s.model === 'b/unpriced')?.facts.costSource).toBe('unknown');
  });

  it('without a catalog latency, fewer than 20 attempts give no latency figure: 3 quick requests do not beat 3,000 measured', () => {
    const models = [
      fact('a/lucky', { typicalLatencyMs: null }),
      fact('b/proven', { typicalLatencyMs: null }),
    ].map((f) => ({ fact: f, observed: undefined, deprecated: false }));
    const seen = [observed('a/lucky', 3, { p95Ms: 150 }), observed('b/proven', 3000, { p95Ms: 900 })];
    const result = run({ candidates: models, weights: { cost: 0, latency: 1, quality: 0 } }, seen);
    expect(result.primary).toBe('b/proven');
    expect(result.scores.find((s) => s.model === 'a/lucky')?.facts.latencySource).toBe('unknown');
    const capped = run(
      { candidates: models, weights: { cost: 0, latency: 1, quality: 0 }, maxLatencyMs: 1000 },
      seen,
    );
    expect(capped.scores.find((s) => s.model === 'a/lucky')?.excludedBecause).toBe(
      'has no latency figure to hold against the latency cap',
    );
    expect(capped.primary).toBe('b/proven');
  });

  it('a needed capability the catalog says a model lacks excludes it; an unknown one does not', () => {
    const models = [
      fact('a/blind', {
        capabilities: { tools: true, structuredOutput: true, vision: false, reasoning: false },
      }),
      fact('b/unknown', {
        capabilities: { tools: null, structuredOutput: null, vision: null, reasoning: null },
      }),
      fact('c/sees', {
        capabilities: { tools: true, structuredOutput: true, vision: true, reasoning: false },
      }),
    ].map((f) => ({ fact: f, observed: undefined, deprecated: false }));
    const result = run({ candidates: models, required: ['vision'] });
    expect(result.scores.find((s) => s.model === 'a/blind')?.excludedBecause).toBe(
      'lacks image input, which the description needs',
    );
    expect(result.scores.find((s) => s.model === 'b/unknown')?.excludedBecause).toBeUndefined();
    expect(result.scores.find((s) => s.model === 'c/sees')?.excludedBecause).toBeUndefined();
  });

  it('fallbacks come from another provider first', () => {
    const result = run({ weights: { cost: 0, latency: 0, quality: 1 } });
    expect(result.primary).toBe('acme/best');
    expect(result.fallbacks[0]).toBe('other/quick');
    expect(result.alternatives).toEqual(['other/quick', 'acme/cheap']);
  });
});
