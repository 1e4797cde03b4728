/**
 * The model catalog: which models a gate may name, for which task types, at what price.
 * Prices come from @pydantic/genai-prices (offline data; its remote update is never called);
 * a small local table adds what that data lacks: task types it cannot tell, and the built-in
 * mock provider's models.
 */

import type { TaskType } from '@gatehouse/rules/gate';
import { calcPrice, findProvider, type ModelInfo, type ModelPrice } from '@pydantic/genai-prices';
import { PROVIDERS, providerDescriptor } from '../providers/descriptors.ts';
import { LOCAL_CATALOG, type UnitPrices } from './localCatalog.ts';

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
  /** Prices per unit other than tokens, for the media task types. */
  unitPrices: UnitPrices;
  source: 'genai-prices' | 'local';
};

/** genai-prices provider id → our provider id, for the providers priced from it. */
const PRICED_PROVIDERS = new Map(
  PROVIDERS.flatMap((p) => (p.prices.source === 'genai-prices' ? [[p.prices.id, p.id] as const] : [])),
);

const TASK_PATTERNS: [RegExp, TaskType][] = [
  [/embed/i, 'embeddings'],
  [/moderation/i, 'moderation'],
  [/whisper/i, 'stt'],
  [/transcri/i, 'stt'],
  [/tts|speech/i, 'tts'],
  [/dall-e|gpt-image|imagen|image-generation|flux|stable-diffusion/i, 'image'],
  [/sora|veo/i, 'video'],
  [/ocr/i, 'ocr'],
];

function inferTaskTypes(id: string): TaskType[] {
  // Whisper translates as well as transcribes; the gpt-4o transcribe models only transcribe.
  if (/whisper/i.test(id)) return ['stt', 'audio'];
  for (const [pattern, type] of TASK_PATTERNS) if (pattern.test(id)) return [type];
  return ['chat'];
}

/** Unit prices genai-prices states (audio by the hour, documents by the thousand pages). */
function unitPricesOf(price: ModelPrice): UnitPrices {
  const hours = perMTok(price.audio_hours ?? price.input_audio_hours);
  const kpages = perMTok(price.input_document_kpages);
  return {
    ...(hours !== null && { perMinute: hours / 60 }),
    ...(kpages !== null && { perPage: kpages / 1000 }),
  };
}

function basePrice(prices: ModelInfo['prices']): ModelPrice {
  if (Array.isArray(prices)) return prices[0]?.prices ?? {};
  return prices;
}

function perMTok(price: ModelPrice[string]): number | null {
  if (price === undefined) return null;
  return typeof price === 'number' ? price : price.base;
}

const LOCAL_MODELS: CatalogModel[] = LOCAL_CATALOG.map((m) => ({
  id: m.id,
  provider: m.id.slice(0, m.id.indexOf('/')),
  providerModel: m.id.slice(m.id.indexOf('/') + 1),
  name: m.name,
  taskTypes: m.taskTypes,
  inputPricePerMTok: m.inputPerMTok ?? 0,
  outputPricePerMTok: m.outputPerMTok ?? 0,
  cachedInputPricePerMTok: null,
  cacheWriteInputPricePerMTok: null,
  contextWindow: m.contextWindow ?? null,
  deprecated: false,
  unitPrices: m.unitPrices ?? {},
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
        unitPrices: unitPricesOf(price),
        source: 'genai-prices',
      });
    }
  }
  for (const model of LOCAL_MODELS) {
    const priced = models.get(model.id);
    // A model genai-prices knows keeps its token prices; the local table adds what it lacks.
    models.set(
      model.id,
      priced
        ? { ...priced, taskTypes: model.taskTypes, unitPrices: { ...priced.unitPrices, ...model.unitPrices } }
        : model,
    );
  }
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
    unitPrices: {},
    source: 'local',
  };
}

/**
 * Names a provider publishes for a catalog model besides its own id (dated snapshots such as
 * gpt-4o-2024-08-06, `-latest` names, `-001` versions), recognised by genai-prices' own match
 * rules: `openai/gpt-4o-2024-08-06` is that snapshot, sent on the wire as named and priced as
 * gpt-4o. Lookups are remembered, a bounded number of them, since clients name models per request.
 */
const ALIAS_NAME = /^[\w.:@-]{1,150}$/;
const aliases = new Map<string, CatalogModel | null>();
const MAX_REMEMBERED_ALIASES = 2_000;

function aliasOf(id: string): CatalogModel | undefined {
  const remembered = aliases.get(id);
  if (remembered !== undefined) return remembered ?? undefined;
  const found = lookUpAlias(id);
  if (aliases.size >= MAX_REMEMBERED_ALIASES) aliases.clear();
  aliases.set(id, found ?? null);
  return found;
}

function lookUpAlias(id: string): CatalogModel | undefined {
  const base = aliasBase(id);
  return base && { ...base, id, providerModel: id.slice(id.indexOf('/') + 1) };
}

/** The catalog model an alias names, as the catalog lists it. */
function aliasBase(id: string): CatalogModel | undefined {
  const slash = id.indexOf('/');
  const provider = id.slice(0, slash);
  const name = id.slice(slash + 1);
  const prices = providerDescriptor(provider)?.prices;
  if (slash < 0 || prices?.source !== 'genai-prices' || !ALIAS_NAME.test(name)) return undefined;
  const match = calcPrice({ input_tokens: 1 }, name, { providerId: prices.id });
  // A provider's list may fall back to another's (Google's to Anthropic's): not its own model.
  if (!match || match.provider.id !== prices.id) return undefined;
  return all().get(`${provider}/${match.model.id}`);
}

/**
 * The id under which listModels() lists the model `id` names: `id` itself, or for an alias the
 * model it stands for (`anthropic/claude-sonnet-4-5-20250929` → `anthropic/claude-sonnet-4-5`).
 */
export function listedModelId(id: string): string | undefined {
  return all().has(id) ? id : aliasBase(id)?.id;
}

const DIMENSIONS = new Map(
  LOCAL_CATALOG.flatMap((m) => (m.dimensions ? [[m.id, m.dimensions] as const] : [])),
);

/**
 * The length of the vectors an embedding model answers when no `dimensions` is asked (an alias
 * answers as the model it names); null where the catalog does not know it (a self-hosted model).
 */
export function defaultDimensions(id: string): number | null {
  const listed = listedModelId(id);
  return listed === undefined ? null : (DIMENSIONS.get(listed) ?? null);
}

/** A model by its `provider/model` id: a catalog model, an alias of one, or a self-hosted one. */
export function findModel(id: string): CatalogModel | undefined {
  return all().get(id) ?? selfHosted(id) ?? aliasOf(id);
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
  if (!model) return `unknown model "${id}" (name a catalog model, e.g. gpt-4o-mini or mock/echo)`;
  if (!model.taskTypes.includes(taskType)) {
    return `model "${id}" does not support task type "${taskType}" (it supports ${model.taskTypes.join(', ')})`;
  }
  return null;
}

export type ModelName = { ok: true; id: string } | { ok: false; message: string };

/**
 * How names a user writes become the `provider/model` ids gates store: `provider/model` as it
 * is, and a plain catalog name (`gpt-4o-mini`, `claude-sonnet-4-5`, a dated snapshot) at the
 * provider that makes it, never a reseller. A name no maker claims goes to the one provider
 * that serves it, or, when several do, the one configured here; several configured is a
 * question only the user can answer, so it is refused listing the spellings to choose from.
 */
export type ModelNames = {
  /** The providers configured here. */
  configured: ReadonlySet<string>;
  resolve(name: string): ModelName;
  /** The plain name that resolves to `id`, if there is one (for listings that show both). */
  plainNameOf(id: string): string | null;
};

/**
 * Providers a plain name may resolve to, makers before resellers as PROVIDERS lists them: those
 * of the published catalog (the mock's models keep their `mock/` prefix, self-hosted servers
 * serve names only their operator knows).
 */
const NAMED_PROVIDERS = PROVIDERS.filter((p) => p.prices.source === 'genai-prices').map((p) => p.id);

function isProviderId(prefix: string): boolean {
  return providerDescriptor(prefix) !== undefined;
}

export function createModelNames(configured: ReadonlySet<string>): ModelNames {
  const remembered = new Map<string, ModelName>();

  function lookUp(name: string): ModelName {
    if (findModel(name)) return { ok: true, id: name };
    const source = findProvider({ modelId: name })?.id;
    const maker = source === undefined ? undefined : PRICED_PROVIDERS.get(source);
    if (maker && findModel(`${maker}/${name}`)) return { ok: true, id: `${maker}/${name}` };
    const servedBy = NAMED_PROVIDERS.map((p) => `${p}/${name}`).filter((id) => findModel(id));
    if (servedBy.length === 1) return { ok: true, id: servedBy[0] as string };
    const here = servedBy.filter((id) => configured.has(id.slice(0, id.indexOf('/'))));
    if (here.length === 1) return { ok: true, id: here[0] as string };
    if (servedBy.length > 1) {
      const choices = here.length > 1 ? here : servedBy;
      return {
        ok: false,
        message: `model "${name}" is served by ${choices.join(' and ')}; name one of them`,
      };
    }
    // Some providers' own names hold a slash (groq's openai/gpt-oss-20b): looked for above.
    const slash = name.indexOf('/');
    if (slash > 0 && isProviderId(name.slice(0, slash))) {
      return { ok: false, message: `unknown model "${name}" (${name.slice(0, slash)} has no such model)` };
    }
    return {
      ok: false,
      message: `unknown model "${name}" (name a catalog model, e.g. gpt-4o-mini or mock/echo)`,
    };
  }

  return {
    configured,
    resolve(name) {
      let found = remembered.get(name);
      if (!found) {
        found = lookUp(name);
        if (remembered.size >= MAX_REMEMBERED_ALIASES) remembered.clear();
        remembered.set(name, found);
      }
      return found;
    },
    plainNameOf(id) {
      const plain = id.slice(id.indexOf('/') + 1);
      const back = this.resolve(plain);
      return back.ok && back.id === id ? plain : null;
    },
  };
}

/** A provider as the model picker shows it: whether it is configured here, and if not, what would configure it. */
export type ProviderStatus = {
  id: string;
  name: string;
  configured: boolean;
  /** The environment variable that configures it (its API key, or a self-hosted server's base URL); null for mock. */
  envVariable: string | null;
};

/** Every provider, in PROVIDERS order, with whether `configured` holds it. */
export function providerStatuses(configured: ReadonlySet<string>): ProviderStatus[] {
  return PROVIDERS.map((p) => ({
    id: p.id,
    name: p.name,
    configured: configured.has(p.id),
    envVariable: p.env === null ? null : p.needs === 'url' ? p.env.baseUrl : p.env.apiKey,
  }));
}

/** What a media model is priced by instead of tokens, for listings. */
export type UnitPrice = { usd: number; per: 'image' | '1M characters' | 'minute' | 'second' | 'page' };

/**
 * The model's price per unit, where it has one: per image (the lowest of its sizes and
 * qualities), per million characters spoken, per minute of audio, per second of video, per page.
 */
export function unitPriceOf(model: CatalogModel): UnitPrice | null {
  const u = model.unitPrices;
  const images = Object.values(u.perImage ?? {});
  if (images.length > 0) return { usd: Math.min(...images), per: 'image' };
  if (u.perMCharacters !== undefined) return { usd: u.perMCharacters, per: '1M characters' };
  if (u.perMinute !== undefined) return { usd: u.perMinute, per: 'minute' };
  if (u.perSecond !== undefined) return { usd: u.perSecond, per: 'second' };
  if (u.perPage !== undefined) return { usd: u.perPage, per: 'page' };
  return null;
}
