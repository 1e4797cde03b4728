// Rewrites the two published-data files the model facts read (src/domain/modelFacts.ts):
//   src/domain/data/model-capabilities.json  output limit, tools, structured output, vision and
//       reasoning per catalog model, from models.dev's catalog (https://models.dev/api.json);
//   src/domain/data/model-quality.json       LMArena's text leaderboard (style control) ratings
//       per catalog model: overall → general, coding → code, math → reasoning.
// NEEDS NETWORK: it downloads both sources. Run from packages/server:
//   npx tsx scripts/refresh-model-quality.ts
// With local copies instead (e.g. models.dev's api.json built from a checkout):
//   npx tsx scripts/refresh-model-quality.ts --models-dev api.json --lmarena leaderboard.json \
//     --models-dev-as-of 2026-07-02 --lmarena-as-of 2025-12-11
// Only ids that resolve to catalog models are written; review the diff before committing.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createModelNames, listedModelId } from '../src/domain/catalog.ts';

const MODELS_DEV_URL = 'https://models.dev/api.json';
const LMARENA_URL =
  'https://raw.githubusercontent.com/lmarena/arena-catalog/main/data/leaderboard-text-style-control.json';
const DATA = path.resolve(import.meta.dirname, '../src/domain/data');

/** Our provider id → models.dev's. Self-hosted servers and the mock have no published facts. */
const MODELS_DEV_PROVIDERS: Record<string, string> = {
  openai: 'openai',
  anthropic: 'anthropic',
  gemini: 'google',
  mistral: 'mistral',
  groq: 'groq',
  deepseek: 'deepseek',
  xai: 'xai',
  together: 'togetherai',
  openrouter: 'openrouter',
};

/** Our quality kinds → LMArena text leaderboard categories. */
const ARENA_CATEGORIES = { general: 'full', code: 'coding', reasoning: 'math' } as const;

type ModelsDevModel = {
  id: string;
  tool_call?: boolean;
  structured_output?: boolean;
  reasoning?: boolean;
  modalities?: { input?: string[] };
  limit?: { output?: number };
};
type ModelsDev = Record<string, { models?: Record<string, ModelsDevModel> }>;
type Arena = Record<string, Record<string, { rating: number }>>;

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
}

/** A source as JSON, from a local file when given, else downloaded; and the date it is of. */
async function load(url: string, file: string | undefined): Promise<{ json: unknown; asOf: string }> {
  if (file) return { json: JSON.parse(await readFile(file, 'utf8')), asOf: today() };
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  const modified = response.headers.get('last-modified');
  const asOf = modified ? new Date(modified).toISOString().slice(0, 10) : today();
  return { json: await response.json(), asOf };
}

/**
 * Whether `name` (a source's) is the listed model `id` or a snapshot of it: the same name once
 * dates, version numbers and `-latest` are taken off the end (claude-opus-4-20250514 is
 * claude-opus-4-0, gpt-4o-2024-08-06 is gpt-4o). genai-prices' looser match rules would also
 * take gpt-5-chat for gpt-5, a different model.
 */
function sameModel(name: string, id: string): boolean {
  const bare = (s: string) => {
    let out = s.slice(s.lastIndexOf('/') + 1);
    for (let before = ''; before !== out; ) {
      before = out;
      out = out.replace(/-(\d{4}-\d{2}-\d{2}|\d{8}|\d{3,4}|0|latest)$/, '');
    }
    return out;
  };
  return bare(name) === bare(id);
}

/** The listed catalog id a source's `provider/name` stands for, if it is that model. */
function listedAs(id: string): string | undefined {
  const listed = listedModelId(id);
  return listed && sameModel(id, listed) ? listed : undefined;
}

function today(): string {
  return new Date().toISOString().slice(0, 10);
}

/** Each catalog model's capabilities; a listed id beats an alias of it (dated snapshots). */
function capabilitiesFrom(source: ModelsDev) {
  const found = new Map<string, { exact: boolean; entry: Record<string, unknown> }>();
  for (const [ours, theirs] of Object.entries(MODELS_DEV_PROVIDERS)) {
    for (const model of Object.values(source[theirs]?.models ?? {})) {
      const name = `${ours}/${model.id}`;
      const id = listedAs(name);
      const exact = id === name;
      if (!id || (found.has(id) && (found.get(id)?.exact || !exact))) continue;
      found.set(id, {
        exact,
        entry: {
          modelsDevId: `${theirs}/${model.id}`,
          tools: model.tool_call ?? null,
          structuredOutput: model.structured_output ?? null,
          vision: model.modalities?.input ? model.modalities.input.includes('image') : null,
          reasoning: model.reasoning ?? null,
          maxOutputTokens: model.limit?.output ?? null,
        },
      });
    }
  }
  return sorted(new Map([...found].map(([id, { entry }]) => [id, entry])));
}

/**
 * Each catalog model's ratings. A leaderboard name resolves as a user's plain name does (at its
 * maker); several names for one model (a dated snapshot, a `-thinking` variant): the one the
 * catalog lists by that very name, else the best rated overall.
 */
function qualityFrom(arena: Arena) {
  const names = createModelNames(new Set());
  const general = arena[ARENA_CATEGORIES.general] ?? {};
  const found = new Map<string, { exact: boolean; rating: number; entry: Record<string, unknown> }>();
  for (const [name, { rating }] of Object.entries(general)) {
    const resolved = names.resolve(name);
    const id = resolved.ok ? listedAs(resolved.id) : undefined;
    if (!id) continue;
    const exact = id.endsWith(`/${name}`);
    const before = found.get(id);
    if (before && (before.exact || (!exact && before.rating >= rating))) continue;
    const ratingOf = (kind: keyof typeof ARENA_CATEGORIES) =>
      round(arena[ARENA_CATEGORIES[kind]]?.[name]?.rating);
    found.set(id, {
      exact,
      rating,
      entry: {
        arenaName: name,
        general: ratingOf('general'),
        code: ratingOf('code'),
        reasoning: ratingOf('reasoning'),
        typicalLatencyMs: null,
      },
    });
  }
  return sorted(new Map([...found].map(([id, { entry }]) => [id, entry])));
}

function round(rating: number | undefined): number | null {
  return rating === undefined ? null : Math.round(rating * 10) / 10;
}

function sorted<T>(map: Map<string, T>): Record<string, T> {
  return Object.fromEntries([...map].sort(([a], [b]) => a.localeCompare(b)));
}

async function write(file: string, data: unknown) {
  await writeFile(path.join(DATA, file), `${JSON.stringify(data, null, 2)}\n`);
  console.log(`wrote ${path.join(DATA, file)}`);
}

/**
 * models.dev drops retired models; a catalog model it no longer lists keeps the facts an earlier
 * run wrote (each entry says as of when).
 */
async function previousCapabilities(): Promise<Record<string, Record<string, unknown>>> {
  const file = await readFile(path.join(DATA, 'model-capabilities.json'), 'utf8').catch(() => null);
  const models: Record<string, Record<string, unknown>> = file ? JSON.parse(file).models : {};
  return Object.fromEntries(Object.entries(models).filter(([id]) => listedModelId(id) === id));
}

const modelsDev = await load(MODELS_DEV_URL, option('--models-dev'));
const modelsDevAsOf = option('--models-dev-as-of') ?? modelsDev.asOf;
const fresh = capabilitiesFrom(modelsDev.json as ModelsDev);
const capabilities = sorted(
  new Map(
    Object.entries({
      ...(await previousCapabilities()),
      ...Object.fromEntries(Object.entries(fresh).map(([id, e]) => [id, { ...e, asOf: modelsDevAsOf }])),
    }),
  ),
);
await write('model-capabilities.json', {
  source: 'models.dev',
  url: MODELS_DEV_URL,
  retrievedAt: today(),
  dataAsOf: modelsDevAsOf,
  note: 'Per catalog model: models.dev tool_call, structured_output, reasoning, image input and output limit; null where it says nothing. Models models.dev has since dropped keep an earlier snapshot (asOf).',
  models: capabilities,
});

const lmarena = await load(LMARENA_URL, option('--lmarena'));
const quality = qualityFrom(lmarena.json as Arena);
await write('model-quality.json', {
  source: 'LMArena text leaderboard, style control',
  url: LMARENA_URL,
  retrievedAt: today(),
  dataAsOf: option('--lmarena-as-of') ?? lmarena.asOf,
  note: 'Arena (Bradley-Terry) ratings: general = overall ("full"), code = "coding", reasoning = "math". typicalLatencyMs: LMArena publishes none, so null.',
  categories: ARENA_CATEGORIES,
  models: quality,
});
console.log(
  `${Object.keys(capabilities).length} models with capabilities, ${Object.keys(quality).length} with ratings`,
);
