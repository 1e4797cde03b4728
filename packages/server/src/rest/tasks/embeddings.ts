/** Embeddings over HTTP: POST /v3/embeddings and OpenAI's POST /v1/embeddings. */
import { z } from 'zod';
import type { TaskOutcome } from '../../dataplane/pipeline.ts';
import { metadata, params } from '../../dataplane/request.ts';
import {
  type EmbeddingsRequest,
  embeddingsData,
  embeddingsKind,
  embeddingsRequest,
  MAX_EMBEDDING_INPUTS,
  nativeEmbeddingsSchema,
} from '../../dataplane/tasks/embeddings.ts';
import { parseWith } from '../../domain/errors.ts';
import type { EmbeddingAnswer } from '../../providers/tasks/embeddings.ts';
import type { NativeTask, OpenAITask } from './routes.ts';

/** A vector as OpenAI's base64 encoding carries it: little-endian float32s. */
function base64Of(vector: number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}

function usageOf(o: TaskOutcome<EmbeddingAnswer>) {
  return { promptTokens: o.usage.promptTokens, totalTokens: o.usage.promptTokens };
}

export const nativeEmbeddings: NativeTask<EmbeddingsRequest, EmbeddingAnswer> = {
  path: 'embeddings',
  kind: embeddingsKind,
  doc: {
    summary: 'Embed texts through a gate',
    body: nativeEmbeddingsSchema,
    ok: { description: '`embeddings` (one vector per text, or base64), `dimensions`, `usage`' },
  },
  parse(body) {
    const { data, gateId: _gateId, ...envelope } = parseWith(nativeEmbeddingsSchema, body);
    return embeddingsRequest(data, envelope);
  },
  answer(o, body) {
    const base64 = (body as { data?: { encodingFormat?: unknown } }).data?.encodingFormat === 'base64';
    return {
      embeddings: base64 ? o.answer.embeddings.map(base64Of) : o.answer.embeddings,
      dimensions: o.answer.embeddings[0]?.length ?? 0,
      usage: { ...usageOf(o), ...(o.tokensEstimated && { estimated: true }) },
    };
  },
};

const openAIEmbeddingsSchema = z.object({
  model: params.model,
  input: z.union([
    z.string().min(1, 'must not be empty'),
    z
      .array(z.string().min(1, 'must not be empty'))
      .min(1, 'must hold at least one text')
      .max(MAX_EMBEDDING_INPUTS, `at most ${MAX_EMBEDDING_INPUTS} texts`),
  ]),
  dimensions: z.number().int().min(1).max(8192).optional(),
  encoding_format: z.enum(['float', 'base64']).optional(),
  user: z.string().optional(),
  gateId: z.uuid().optional(),
  metadata: metadata.optional(),
});

export const openAIEmbeddings: OpenAITask<EmbeddingsRequest, EmbeddingAnswer> = {
  path: 'embeddings',
  kind: embeddingsKind,
  doc: {
    summary: "Embeddings, in OpenAI's wire format",
    body: openAIEmbeddingsSchema.loose(),
    ok: { description: 'A list of embeddings, as OpenAI answers' },
  },
  parse(body, modelIsGate) {
    const b = parseWith(openAIEmbeddingsSchema, body);
    return embeddingsRequest(
      embeddingsData.parse({
        input: b.input,
        ...(b.dimensions !== undefined && { dimensions: b.dimensions }),
        ...(b.encoding_format !== undefined && { encodingFormat: b.encoding_format }),
      }),
      { ...(!modelIsGate && { model: b.model }), ...(b.metadata && { metadata: b.metadata }) },
    );
  },
  answer(o, body) {
    const base64 = (body as { encoding_format?: unknown }).encoding_format === 'base64';
    return {
      object: 'list',
      data: o.answer.embeddings.map((embedding, index) => ({
        object: 'embedding',
        index,
        embedding: base64 ? base64Of(embedding) : embedding,
      })),
      model: o.modelUsed,
      usage: { prompt_tokens: o.usage.promptTokens, total_tokens: o.usage.promptTokens },
    };
  },
};
