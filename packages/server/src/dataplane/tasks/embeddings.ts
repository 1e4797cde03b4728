/**
 * Embeddings through a gate: `input` (a string or up to 2,048 of them) → one vector each. Priced
 * per input token; a block gate reserves one token per byte of input, which no tokenizer exceeds.
 */
import { z } from 'zod';
import { defaultDimensions, findModel } from '../../domain/catalog.ts';
import type { Gate } from '../../generated/prisma/client.ts';
import { type EmbeddingAnswer, type EmbeddingParams, embed } from '../../providers/tasks/embeddings.ts';
import { costOf, countTextTokens, tokensBound } from '../cost.ts';
import { connectionFor, mergeModel, type TaskKind, type TaskRequestBase } from '../pipeline.ts';
import { envelopeFields, nativeEnvelope } from './common.ts';

export const MAX_EMBEDDING_INPUTS = 2048;

const input = z.union([
  z.string().min(1, 'must not be empty'),
  z
    .array(z.string().min(1, 'must not be empty'))
    .min(1, 'must hold at least one text')
    .max(MAX_EMBEDDING_INPUTS, `at most ${MAX_EMBEDDING_INPUTS} texts`),
]);
const dimensions = z.number().int().min(1).max(8192);

export const embeddingsData = z.strictObject({
  input,
  dimensions: dimensions.optional(),
  encodingFormat: z.enum(['float', 'base64']).optional(),
});

export const nativeEmbeddingsSchema = nativeEnvelope(embeddingsData);

export type EmbeddingsRequest = TaskRequestBase & {
  input: string[];
  dimensions?: number;
  encodingFormat: 'float' | 'base64';
};

export function embeddingsRequest(
  data: z.infer<typeof embeddingsData>,
  envelope: Omit<z.infer<typeof nativeEmbeddingsSchema>, 'data' | 'gateId'>,
): EmbeddingsRequest {
  return {
    input: typeof data.input === 'string' ? [data.input] : data.input,
    ...(data.dimensions !== undefined && { dimensions: data.dimensions }),
    encodingFormat: data.encodingFormat ?? 'float',
    ...envelopeFields(envelope),
  };
}

/** The dearest input price among `models`, per token. */
function dearestInputPerToken(models: string[]): number {
  let dearest = 0;
  for (const id of models) dearest = Math.max(dearest, findModel(id)?.inputPricePerMTok ?? 0);
  return dearest / 1_000_000;
}

export const embeddingsKind: TaskKind<EmbeddingsRequest, EmbeddingParams, EmbeddingAnswer> = {
  taskType: 'embeddings',
  noun: 'embeddings',
  merge(gate: Gate, request: EmbeddingsRequest) {
    const { model, ignoredOverrides } = mergeModel(gate, request);
    const params: EmbeddingParams = {
      input: request.input,
      ...(request.dimensions !== undefined && { dimensions: request.dimensions }),
    };
    return { model, params, ignoredOverrides };
  },
  worstCase: (models, params) => tokensBound(params.input) * dearestInputPerToken(models),
  promptTokens: (params) => countTextTokens(params.input),
  attempt: (a) => embed(connectionFor(a), a.model.providerModel, a.params, a.timing.signal),
  // The vectors' length: the primary's is the `dimensions` asked for, else its default.
  shapeOf: (answer, params, primary) => ({
    dimensions: answer.embeddings[0]?.length ?? 0,
    primaryDimensions: params.dimensions ?? defaultDimensions(primary),
  }),
  async price(_model, modelId, params, answer) {
    const reported = answer.promptTokens;
    const promptTokens = reported ?? (await countTextTokens(params.input));
    const usage = { promptTokens, completionTokens: 0 };
    return { usage, tokensEstimated: reported === null, costUsd: costOf(modelId, usage) };
  },
};
