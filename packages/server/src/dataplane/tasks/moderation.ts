/**
 * Moderation through a gate: `input` (a string or up to 1,000 of them) → one verdict each, in the
 * provider's own categories. Priced per input token (OpenAI's moderation is free, Mistral's is
 * not); a block gate reserves one token per byte of input, which no tokenizer exceeds.
 */
import { z } from 'zod';
import { findModel } from '../../domain/catalog.ts';
import type { Gate } from '../../generated/prisma/client.ts';
import { type ModerationAnswer, type ModerationParams, moderate } from '../../providers/tasks/moderation.ts';
import { costOf, countTextTokens, tokensBound } from '../cost.ts';
import { connectionFor, mergeModel, type TaskKind, type TaskRequestBase } from '../pipeline.ts';
import { envelopeFields, nativeEnvelope } from './common.ts';

export const MAX_MODERATION_INPUTS = 1000;

export const moderationInput = z.union([
  z.string().min(1, 'must not be empty'),
  z
    .array(z.string().min(1, 'must not be empty'))
    .min(1, 'must hold at least one text')
    .max(MAX_MODERATION_INPUTS, `at most ${MAX_MODERATION_INPUTS} texts`),
]);

export const moderationData = z.strictObject({ input: moderationInput });

export const nativeModerationSchema = nativeEnvelope(moderationData);

export type ModerationRequest = TaskRequestBase & { input: string[] };

export function moderationRequest(
  data: z.infer<typeof moderationData>,
  envelope: Omit<z.infer<typeof nativeModerationSchema>, 'data' | 'gateId'>,
): ModerationRequest {
  return {
    input: typeof data.input === 'string' ? [data.input] : data.input,
    ...envelopeFields(envelope),
  };
}

/** The dearest input price among `models`, per token. */
function dearestInputPerToken(models: string[]): number {
  let dearest = 0;
  for (const id of models) dearest = Math.max(dearest, findModel(id)?.inputPricePerMTok ?? 0);
  return dearest / 1_000_000;
}

export const moderationKind: TaskKind<ModerationRequest, ModerationParams, ModerationAnswer> = {
  taskType: 'moderation',
  noun: 'moderation',
  merge(gate: Gate, request: ModerationRequest) {
    const { model, ignoredOverrides } = mergeModel(gate, request);
    return { model, params: { input: request.input }, ignoredOverrides };
  },
  worstCase: (models, params) => tokensBound(params.input) * dearestInputPerToken(models),
  promptTokens: (params) => countTextTokens(params.input),
  attempt: (a) => moderate(connectionFor(a), a.model.providerModel, a.params, a.timing.signal),
  async price(_model, modelId, params, answer) {
    const reported = answer.promptTokens;
    const promptTokens = reported ?? (await countTextTokens(params.input));
    const usage = { promptTokens, completionTokens: 0 };
    return { usage, tokensEstimated: reported === null, costUsd: costOf(modelId, usage) };
  },
};
