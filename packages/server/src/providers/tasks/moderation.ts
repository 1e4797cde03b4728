/**
 * Moderation on each provider's wire: OpenAI's `/moderations`, Mistral's `/v1/moderations` (its
 * own categories, and no `flagged`), and the mock's keyword classifier. Every answer keeps the
 * provider's own category names: OpenAI's `hate/threatening`, Mistral's `hate_and_discrimination`.
 */
import { createHash } from 'node:crypto';
import { postJson } from '../http.ts';
import { mockMisbehaviour } from '../mock.ts';
import type { ProviderConnection } from '../registry.ts';
import { ProviderError, withWireRequest } from '../types.ts';
import { bearer, openAIPath, unsupported } from './common.ts';

export type ModerationParams = { input: string[] };

/** One input's verdict, keyed by the provider's own category names. */
export type ModerationResult = {
  flagged: boolean;
  categories: Record<string, boolean>;
  scores: Record<string, number>;
  /** OpenAI's `category_applied_input_types`, where the provider sent it. */
  appliedInputTypes?: Record<string, string[]>;
};

export type ModerationAnswer = {
  results: ModerationResult[];
  /** Input tokens as the provider reported them; null where it reports none. */
  promptTokens: number | null;
  providerRequest: unknown;
  providerResponse: unknown;
};

type WireResult = {
  flagged?: unknown;
  categories?: unknown;
  category_scores?: unknown;
  category_applied_input_types?: unknown;
};

type WireModeration = { results?: WireResult[]; usage?: { prompt_tokens?: number } };

function recordOf<T>(value: unknown, isT: (v: unknown) => v is T, what: string): Record<string, T> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new ProviderError('invalid_response', `The provider sent no ${what}`);
  }
  const out: Record<string, T> = {};
  // A category the provider leaves null (OpenAI's `illicit` on older models) is not flagged.
  for (const [name, v] of Object.entries(value)) if (isT(v)) out[name] = v;
  return out;
}

const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
const isNumber = (v: unknown): v is number => typeof v === 'number';
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

function resultsOf(response: WireModeration, count: number): ModerationResult[] {
  const results = (response.results ?? []).map((r): ModerationResult => {
    const categories = recordOf(r.categories, isBoolean, 'categories');
    const scores = recordOf(r.category_scores ?? {}, isNumber, 'category scores');
    const applied =
      r.category_applied_input_types === undefined
        ? undefined
        : recordOf(r.category_applied_input_types, isStrings, 'applied input types');
    return {
      // Mistral sends no `flagged`: an input is flagged when any category is.
      flagged: typeof r.flagged === 'boolean' ? r.flagged : Object.values(categories).some(Boolean),
      categories,
      scores,
      ...(applied && { appliedInputTypes: applied }),
    };
  });
  if (results.length !== count) {
    throw new ProviderError(
      'invalid_response',
      `The provider sent ${results.length} results for ${count} inputs`,
    );
  }
  return results;
}

/** OpenAI's `/moderations` and Mistral's `/v1/moderations` take the same `{model, input}`. */
async function openAIModerate(
  conn: ProviderConnection,
  model: string,
  params: ModerationParams,
  signal: AbortSignal,
): Promise<ModerationAnswer> {
  const body = { model, input: params.input };
  const response = (await withWireRequest(
    () => body,
    postJson(openAIPath(conn, '/moderations'), bearer(conn), body, signal),
  )) as WireModeration;
  return {
    results: resultsOf(response, params.input.length),
    // OpenAI reports no usage (moderation is free); Mistral may.
    promptTokens: response.usage?.prompt_tokens ?? null,
    providerRequest: body,
    providerResponse: response,
  };
}

/** OpenAI's categories, which the mock answers in. */
export const OPENAI_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/instructions',
  'self-harm/intent',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;

/** The mock's keywords: a word (or its start) flags these categories. */
const MOCK_KEYWORDS: [RegExp, string[]][] = [
  [/\b(kill|murder|attack|shoot)/i, ['violence']],
  [/\b(hate|hating)/i, ['hate']],
  [/\b(harass|bully)/i, ['harassment']],
  [/\b(suicide|self-harm)/i, ['self-harm']],
  [/\b(nsfw|porn)/i, ['sexual']],
  [/\b(gore|bloody)/i, ['violence/graphic']],
  [/\b(steal|drugs)/i, ['illicit']],
];

/** A flagged category scores 0.9 to 1, another 0 to 0.05: both fixed by the text and category. */
function mockScore(text: string, category: string, flagged: boolean): number {
  const n = createHash('sha256').update(`${category}\n${text}`).digest().readUInt16BE(0) / 65535;
  return Number((flagged ? 0.9 + n * 0.1 : n * 0.05).toFixed(6));
}

export function mockModeration(text: string): ModerationResult {
  const hit = new Set(
    MOCK_KEYWORDS.flatMap(([pattern, categories]) => (pattern.test(text) ? categories : [])),
  );
  const categories: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  for (const category of OPENAI_CATEGORIES) {
    categories[category] = hit.has(category);
    scores[category] = mockScore(text, category, hit.has(category));
  }
  return { flagged: hit.size > 0, categories, scores };
}

async function mockModerate(
  conn: ProviderConnection,
  model: string,
  params: ModerationParams,
  signal: AbortSignal,
): Promise<ModerationAnswer> {
  const request = { model, ...params };
  return withWireRequest(
    () => request,
    (async () => {
      await mockMisbehaviour(params.input.join('\n'), model, { latencyMs: conn.mockLatencyMs, signal });
      const results = params.input.map(mockModeration);
      const promptTokens = params.input.reduce((n, text) => n + Math.max(1, Math.ceil(text.length / 4)), 0);
      return {
        results,
        promptTokens,
        providerRequest: request,
        providerResponse: {
          id: `modr-mock-${createHash('sha256').update(params.input.join('\n')).digest('hex').slice(0, 12)}`,
          model: `mock/${model}`,
          results: results.map((r) => ({
            flagged: r.flagged,
            categories: r.categories,
            category_scores: r.scores,
          })),
          usage: { prompt_tokens: promptTokens },
        },
      };
    })(),
  );
}

export function moderate(
  conn: ProviderConnection,
  model: string,
  params: ModerationParams,
  signal: AbortSignal,
): Promise<ModerationAnswer> {
  switch (conn.descriptor.wire.format) {
    case 'openai':
      return openAIModerate(conn, model, params, signal);
    case 'mock':
      return mockModerate(conn, model, params, signal);
    default:
      return Promise.reject(unsupported(conn, 'moderation'));
  }
}
