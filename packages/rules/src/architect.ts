/**
 * The Architect's rules shared by the server and the dashboard: what a suggestion request may
 * carry, how a preset or custom weights become the three weights the score uses, and the shape
 * of the analysis a gate stores (taskAnalysis).
 */
import { z } from 'zod';
import { ANALYSIS_METHODS, gateFieldSchemas, LIMITS, TASK_SUBTYPES, TASK_TYPES } from './gate.ts';
import { isStorableText, STORABLE_TEXT_MESSAGE } from './storable.ts';

export type AnalysisMethod = (typeof ANALYSIS_METHODS)[number];
export type Weights = { cost: number; latency: number; quality: number };

/** What each preset weighs; `custom` takes the gate's own three weights. */
export const ANALYSIS_PRESETS: Record<Exclude<AnalysisMethod, 'custom'>, Weights> = {
  cost: { cost: 0.6, latency: 0.15, quality: 0.25 },
  balanced: { cost: 1 / 3, latency: 1 / 3, quality: 1 / 3 },
  performance: { cost: 0.1, latency: 0.4, quality: 0.5 },
};

/** The quality figure the score reads: a subtype asks for its own; everything else is general. */
export const QUALITY_KINDS = ['general', 'code', 'reasoning'] as const;
export type QualityKind = (typeof QUALITY_KINDS)[number];

/** Days of the gateway's own traffic the Architect reads by default, and at most. */
export const OBSERVED_WINDOW_DAYS = { default: 7, max: 90 } as const;

/**
 * How much better (in total score, 0–1) a new recommendation must be before auto-apply replaces
 * the gate's primary model: small differences from one day's traffic to the next never flap it.
 */
export const AUTO_APPLY_MARGIN = 0.05;

/** Attempts seen before a model's observed p95 latency, not the catalog's figure, meets the latency cap. */
export const MIN_LATENCY_SAMPLES = 20;

/**
 * The weights of a method, or of the three custom fields (missing ones count 0), normalised to
 * sum 1. With no method and no weights: balanced. Null when custom weights are all 0.
 */
export function weightsOf(s: {
  analysisMethod?: AnalysisMethod | null | undefined;
  costWeight?: number | null | undefined;
  latencyWeight?: number | null | undefined;
  qualityWeight?: number | null | undefined;
}): Weights | null {
  const anyWeight = [s.costWeight, s.latencyWeight, s.qualityWeight].some((w) => w != null);
  const method = s.analysisMethod ?? (anyWeight ? 'custom' : 'balanced');
  if (method !== 'custom') return ANALYSIS_PRESETS[method];
  const raw = { cost: s.costWeight ?? 0, latency: s.latencyWeight ?? 0, quality: s.qualityWeight ?? 0 };
  const sum = raw.cost + raw.latency + raw.quality;
  if (sum <= 0) return null;
  return { cost: raw.cost / sum, latency: raw.latency / sum, quality: raw.quality / sum };
}

const PROVIDER_ID = /^[a-z0-9][a-z0-9-]{0,39}$/;

const availableProviders = z
  .array(z.string().regex(PROVIDER_ID, 'must be a provider id such as openai'))
  .min(1, 'must name at least one provider')
  .max(20);
const windowDays = z.number().int().min(1).max(OBSERVED_WINDOW_DAYS.max);

/** POST /v1/gates/suggestions and the GraphQL suggestModels mutation. */
export const suggestionInputSchema = z
  .strictObject({
    description: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(LIMITS.descriptionLength, `must be at most ${LIMITS.descriptionLength} characters`)
      .refine(isStorableText, STORABLE_TEXT_MESSAGE),
    taskType: z.enum(TASK_TYPES).optional(),
    taskSubtype: z.enum(TASK_SUBTYPES).optional(),
    costWeight: gateFieldSchemas.costWeight.optional(),
    latencyWeight: gateFieldSchemas.latencyWeight.optional(),
    qualityWeight: gateFieldSchemas.qualityWeight.optional(),
    analysisMethod: z.enum(ANALYSIS_METHODS).optional(),
    maxCostPer1kTokens: gateFieldSchemas.maxCostPer1kTokens.optional(),
    maxLatencyMs: gateFieldSchemas.maxLatencyMs.optional(),
    availableProviders: availableProviders.optional(),
    enableDescriptionEnhancement: z.boolean().optional(),
    windowDays: windowDays.optional(),
  })
  .superRefine((input, ctx) => {
    if (weightsOf(input) === null) {
      ctx.addIssue({
        code: 'custom',
        path: ['costWeight'],
        message: 'custom weights must not all be 0: give cost, latency or quality a weight',
      });
    }
  });
export type SuggestionInput = z.infer<typeof suggestionInputSchema>;

/** POST /v1/gates/:id/analysis: the gate's settings give the rest. */
export const analysisOptionsSchema = z.strictObject({
  availableProviders: availableProviders.optional(),
  enableDescriptionEnhancement: z.boolean().optional(),
  windowDays: windowDays.optional(),
});
export type AnalysisOptions = z.infer<typeof analysisOptionsSchema>;

/** One model's figures in an analysis; every number the choice rests on. */
export type ModelScore = {
  model: string;
  /** 0–1 each, normalised among the models that passed the filters; total includes reliability. */
  cost: number;
  latency: number;
  quality: number;
  reliability: number;
  total: number;
  /** Set when a hard filter removed the model; its scores are then 0. */
  excludedBecause?: string;
  facts: {
    /** USD per 1,000 tokens at the token mix named in the reasoning (token-priced types), or per unit. */
    costPerUnit: number | null;
    costUnit: string;
    costSource: 'catalog' | 'observed' | 'blended' | 'unknown';
    latencyMs: number | null;
    latencySource: 'catalog' | 'observed p95' | 'blended' | 'unknown';
    quality: number | null;
    qualityKind: QualityKind;
    errorRate: number | null;
    samples: number;
  };
};

/** What the Architect concluded, as a gate stores it (taskAnalysis) and the endpoints answer it. */
export type TaskAnalysis = {
  taskType: (typeof TASK_TYPES)[number];
  taskSubtype?: (typeof TASK_SUBTYPES)[number] | null;
  primary: string | null;
  alternatives: string[];
  fallbacks: string[];
  reasoning: string;
  scores: ModelScore[];
  weights: Weights;
  requiredCapabilities: string[];
  /** How the description was read: by the configured model, or by the documented rules. */
  readBy: 'rules' | 'model';
  window: { since: string; until: string; scope: 'gate' | 'account' };
  analysedAt: string;
};
