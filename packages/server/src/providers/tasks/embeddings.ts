/**
 * Embeddings on each provider's wire: OpenAI's `/embeddings` (OpenAI, Mistral and the compatible
 * family), Gemini's `batchEmbedContents`, and the mock's deterministic unit vectors.
 */
import { createHash } from 'node:crypto';
import { defaultDimensions } from '../../domain/catalog.ts';
import { postJson } from '../http.ts';
import { mockMisbehaviour } from '../mock.ts';
import type { ProviderConnection } from '../registry.ts';
import { ProviderError, withWireRequest } from '../types.ts';
import { bearer, geminiHeaders, openAIPath, unsupported } from './common.ts';

export type EmbeddingParams = {
  input: string[];
  /** Output dimensions, where the model can shorten its vectors. */
  dimensions?: number;
};

export type EmbeddingAnswer = {
  embeddings: number[][];
  /** Input tokens as the provider reported them; null where it reports none. */
  promptTokens: number | null;
  providerRequest: unknown;
  providerResponse: unknown;
};

type OpenAIEmbeddings = {
  data?: { embedding?: unknown; index?: number }[];
  usage?: { prompt_tokens?: number };
};

function vectorsOf(items: { embedding?: unknown; index?: number }[] | undefined, count: number): number[][] {
  const vectors: number[][] = [];
  for (const [i, item] of (items ?? []).entries()) {
    const v = item.embedding;
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'number')) {
      throw new ProviderError(
        'invalid_response',
        'The provider sent an embedding that is not a list of numbers',
      );
    }
    vectors[item.index ?? i] = v;
  }
  if (vectors.length !== count || vectors.some((v) => v === undefined)) {
    throw new ProviderError(
      'invalid_response',
      `The provider sent ${vectors.length} embeddings for ${count} inputs`,
    );
  }
  return vectors;
}

async function openAIEmbed(
  conn: ProviderConnection,
  model: string,
  params: EmbeddingParams,
  signal: AbortSignal,
): Promise<EmbeddingAnswer> {
  const body = {
    model,
    input: params.input,
    encoding_format: 'float',
    ...(params.dimensions !== undefined && { dimensions: params.dimensions }),
  };
  const response = (await withWireRequest(
    () => body,
    postJson(openAIPath(conn, '/embeddings'), bearer(conn), body, signal),
  )) as OpenAIEmbeddings;
  return {
    embeddings: vectorsOf(response.data, params.input.length),
    promptTokens: response.usage?.prompt_tokens ?? null,
    providerRequest: body,
    providerResponse: response,
  };
}

async function geminiEmbed(
  conn: ProviderConnection,
  model: string,
  params: EmbeddingParams,
  signal: AbortSignal,
): Promise<EmbeddingAnswer> {
  const body = {
    requests: params.input.map((text) => ({
      model: `models/${model}`,
      content: { parts: [{ text }] },
      ...(params.dimensions !== undefined && { outputDimensionality: params.dimensions }),
    })),
  };
  const url = `${conn.baseUrl}/v1beta/models/${encodeURIComponent(model)}:batchEmbedContents`;
  const response = (await withWireRequest(() => body, postJson(url, geminiHeaders(conn), body, signal))) as {
    embeddings?: { values?: unknown }[];
  };
  return {
    embeddings: vectorsOf(
      response.embeddings?.map((e) => ({ embedding: e.values })),
      params.input.length,
    ),
    // Gemini's embedding API reports no usage: the gateway counts the tokens.
    promptTokens: null,
    providerRequest: body,
    providerResponse: response,
  };
}

/** A deterministic unit vector per text: the same text always embeds the same. */
export function mockVector(text: string, dimensions: number): number[] {
  const values: number[] = [];
  let block = createHash('sha256').update(text).digest();
  while (values.length < dimensions) {
    for (let i = 0; i + 1 < block.length && values.length < dimensions; i += 2) {
      values.push((block.readUInt16BE(i) / 65535) * 2 - 1);
    }
    block = createHash('sha256').update(block).digest();
  }
  const norm = Math.hypot(...values) || 1;
  return values.map((v) => v / norm);
}

async function mockEmbed(
  conn: ProviderConnection,
  model: string,
  params: EmbeddingParams,
  signal: AbortSignal,
): Promise<EmbeddingAnswer> {
  const request = { model, ...params };
  return withWireRequest(
    () => request,
    (async () => {
      await mockMisbehaviour(params.input.join('\n'), model, { latencyMs: conn.mockLatencyMs, signal });
      // Each mock model's own length, as the catalog lists it (mock/embed 1,536, mock/embed-large 3,072).
      const dimensions = params.dimensions ?? defaultDimensions(`mock/${model}`) ?? 1536;
      const embeddings = params.input.map((text) => mockVector(text, dimensions));
      const promptTokens = params.input.reduce((n, text) => n + Math.max(1, Math.ceil(text.length / 4)), 0);
      return {
        embeddings,
        promptTokens,
        providerRequest: request,
        providerResponse: {
          object: 'list',
          model: `mock/${model}`,
          data: embeddings.map((_, index) => ({
            object: 'embedding',
            index,
            embedding: `[${dimensions} numbers]`,
          })),
          usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
        },
      };
    })(),
  );
}

export function embed(
  conn: ProviderConnection,
  model: string,
  params: EmbeddingParams,
  signal: AbortSignal,
): Promise<EmbeddingAnswer> {
  switch (conn.descriptor.wire.format) {
    case 'openai':
      return openAIEmbed(conn, model, params, signal);
    case 'gemini':
      return geminiEmbed(conn, model, params, signal);
    case 'mock':
      return mockEmbed(conn, model, params, signal);
    default:
      return Promise.reject(unsupported(conn, 'embeddings'));
  }
}
