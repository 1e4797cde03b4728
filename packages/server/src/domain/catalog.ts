/**
 * The model catalog: which models a gate may name, for which task types, at what price.
 * Prices come from @pydantic/genai-prices (offline data; its remote update is never called);
 * a small local table adds what that data lacks: task types it cannot tell, and the built-in
 * mock provider's models.
 */

import type { TaskType } from '@gatehouse/rules/gate';
import { findProvider, type ModelInfo, type ModelPrice } from '@pydantic/genai-prices';
import { PROVIDERS } from '../providers/descriptors.ts';

export type CatalogModel = {
  /** "provider/model", the identifier gates use. */
  id: string;
  provider: string;
  /** The provider's own name for the model, sent on the wire. */
  providerModel: string;
  name: string;
  taskTypes: TaskType[];
  /** USD per million tokens; null where the source gives no price. */
  inputPricePerMTok: number | null;
  outputPricePerMTok: number | null;
  cachedInputPricePerMTok: number | null;
  /** Writing input to the prompt cache (Anthropic); null: charged as input. */
  cacheWriteInputPricePerMTok: number | null;
  contextWindow: number | null;
  deprecated: boolean;
  source: 'genai-prices' | 'local';
};

/** genai-prices provider id → our provider id, for the providers priced from it. */
const PRICED_PROVIDERS = new Map(
  PROVIDERS.flatMap((p) => (p.prices.source === 'genai-prices' ? [[p.prices.id, p.id] as const] : [])),
);

const TASK_PATTERNS: [RegExp, TaskType][] = [
  [/embed/i, 'embeddings'],
  [/moderation/i, 'moderation'],
  [/whisper|transcri/i, 'stt'],
  [/tts|speech/i, 'tts'],
  [/dall-e|gpt-image|imagen|image-generation|flux|stable-diffusion/i, 'image'],
  [/sora|veo/i, 'video'],
  [/ocr/i, 'ocr'],
];

function inferTaskTypes(id: string): TaskType[] {
  for (const [pattern, type] of TASK_PATTERNS) if (pattern.test(id)) return [type];
  if (/audio/i.test(id)) return ['chat', 'audio'];
  return ['chat'];
}

function basePrice(prices: ModelInfo['prices']): ModelPrice {
  if (Array.isArray(prices)) return prices[0]?.prices ?? {};
  return prices;
}

function perMTok(price: ModelPrice[string]): number | null {
  if (price === undefined) return null;
  return typeof price === 'number' ? price : price.base;
}

const LOCAL_MODELS: CatalogModel[] = [
  ['mock/echo', 'Mock echo: repeats the last user message', ['chat'], 1, 2],
  ['mock/fast', 'Mock fast chat', ['chat'], 0.5, 1],
  ['mock/smart', 'Mock smart chat', ['chat'], 3, 15],
  ['mock/embed', 'Mock embeddings', ['embeddings'], 0.1, 0],
  ['mock/image', 'Mock image generation', ['image'], 0, 0],
].map(([id, name, taskTypes, input, output]) => ({
  id: id as string,
  provider: 'mock',
  providerModel: (id as string).slice('mock/'.length),
  name: name as string,
  taskTypes: taskTypes as TaskType[],
  inputPricePerMTok: input as number,
  outputPricePerMTok: output as number,
  cachedInputPricePerMTok: null,
  cacheWriteInputPricePerMTok: null,
  contextWindow: 128_000,
  deprecated: false,
  source: 'local' as const,
}));

function buildCatalog(): Map<string, CatalogModel> {
  const models = new Map<string, CatalogModel>();
  for (const [sourceId, provider] of PRICED_PROVIDERS) {
    for (const info of findProvider({ providerId: sourceId })?.models ?? []) {
      // Google's price list also carries other vendors' models served on Vertex.
      if (provider === 'gemini' && !/^(gemini|gemma|imagen|veo)/.test(info.id)) continue;
      const price = basePrice(info.prices);
      const id = `${provider}/${info.id}`;
      models.set(id, {
        id,
        provider,
        providerModel: info.id,
        name: info.name ?? info.id,
        taskTypes: inferTaskTypes(info.id),
        inputPricePerMTok: perMTok(price.input_mtok),
        outputPricePerMTok: perMTok(price.output_mtok),
        cachedInputPricePerMTok: perMTok(price.cache_read_mtok),
        cacheWriteInputPricePerMTok: perMTok(price.cache_write_mtok),
        contextWindow: info.context_window ?? null,
        deprecated: info.deprecated ?? false,
        source: 'genai-prices',
      });
    }
  }
  for (const model of LOCAL_MODELS) models.set(model.id, model);
  return models;
}

let catalog: Map<string, CatalogModel> | undefined;

function all(): Map<string, CatalogModel> {
  catalog ??= buildCatalog();
  return catalog;
}

/**
 * Self-hosted servers (Ollama, vLLM) serve whatever models their operator pulled: any
 * `ollama/<name>` or `vllm/<name>` is accepted, free of charge, for chat and embeddings.
 */
const SELF_HOSTED = new Set(PROVIDERS.filter((p) => p.prices.source === 'self-hosted').map((p) => p.id));

function selfHosted(id: string): CatalogModel | undefined {
  const slash = id.indexOf('/');
  const provider = id.slice(0, slash);
  const name = id.slice(slash + 1);
  if (slash < 0 || !SELF_HOSTED.has(provider) || !/^[\w.:@/-]{1,150}$/.test(name)) return undefined;
  return {
    id,
    provider,
    providerModel: name,
    name,
    taskTypes: ['chat', 'embeddings'],
    inputPricePerMTok: 0,
    outputPricePerMTok: 0,
    cachedInputPricePerMTok: null,
    cacheWriteInputPricePerMTok: null,
    contextWindow: null,
    deprecated: false,
    source: 'local',
  };
}

export function findModel(id: string): CatalogModel | undefined {
  return all().get(id) ?? selfHosted(id);
}

export function listModels(filter: { taskType?: TaskType; provider?: string } = {}): CatalogModel[] {
  return [...all().values()]
    .filter((m) => !filter.taskType || m.taskTypes.includes(filter.taskType))
    .filter((m) => !filter.provider || m.provider === filter.provider)
    .sort((a, b) => a.id.localeCompare(b.id));
}

/** Why `id` cannot serve a gate of `taskType`, or null when it can. */
export function modelProblem(id: string, taskType: TaskType): string | null {
  const model = findModel(id);
  if (!model) return `unknown model "${id}" (models are named provider/model, e.g. mock/echo)`;
  if (!model.taskTypes.includes(taskType)) {
    return `model "${id}" does not support task type "${taskType}" (it supports ${model.taskTypes.join(', ')})`;
  }
  return null;
}
