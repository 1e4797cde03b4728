/**
 * Speech through a gate (tts): `input` text → an audio file. Priced per character (the input and
 * any instructions); a block gate reserves the characters at the dearest per-character price of
 * the gate's models, which is exactly what the answer is then charged.
 */
import { z } from 'zod';
import { findModel } from '../../domain/catalog.ts';
import type { Gate } from '../../generated/prisma/client.ts';
import {
  SPEECH_FORMATS,
  type SpeechAnswer,
  type SpeechParams,
  speak,
  speechCharacters,
} from '../../providers/tasks/speech.ts';
import { connectionFor, mergeModel, type TaskKind, type TaskRequestBase } from '../pipeline.ts';
import { envelopeFields, nativeEnvelope } from './common.ts';

/** OpenAI's limit on one request's text. */
export const MAX_SPEECH_CHARACTERS = 4096;

export const speechData = z.strictObject({
  input: z
    .string()
    .min(1, 'must not be empty')
    .max(MAX_SPEECH_CHARACTERS, `at most ${MAX_SPEECH_CHARACTERS} characters`),
  voice: z.string().min(1).max(100).optional(),
  speed: z.number().min(0.25).max(4).optional(),
  responseFormat: z.enum(SPEECH_FORMATS).optional(),
  instructions: z.string().max(MAX_SPEECH_CHARACTERS).optional(),
});

export const nativeSpeechSchema = nativeEnvelope(speechData);

export type SpeechRequest = TaskRequestBase & SpeechParams;

export function speechRequest(
  data: z.infer<typeof speechData>,
  envelope: Omit<z.infer<typeof nativeSpeechSchema>, 'data' | 'gateId'>,
): SpeechRequest {
  return {
    input: data.input,
    ...(data.voice !== undefined && { voice: data.voice }),
    ...(data.speed !== undefined && { speed: data.speed }),
    format: data.responseFormat ?? 'mp3',
    ...(data.instructions !== undefined && { instructions: data.instructions }),
    ...envelopeFields(envelope),
  };
}

const perCharacter = (modelId: string) => (findModel(modelId)?.unitPrices.perMCharacters ?? 0) / 1_000_000;

export const speechKind: TaskKind<SpeechRequest, SpeechParams, SpeechAnswer> = {
  taskType: 'tts',
  noun: 'speech',
  merge(gate: Gate, request: SpeechRequest) {
    const { model, ignoredOverrides } = mergeModel(gate, request);
    const { model: _m, sessionId: _s, metadata: _md, ...params } = request;
    return { model, params, ignoredOverrides };
  },
  worstCase: (models, params) =>
    speechCharacters(params) * Math.max(0, ...models.map((id) => perCharacter(id))),
  attempt: (a) => speak(connectionFor(a), a.model.providerModel, a.params, a.timing.signal),
  price(_model, modelId, params) {
    const characters = speechCharacters(params);
    return {
      usage: { promptTokens: 0, completionTokens: 0 },
      tokensEstimated: false,
      costUsd: characters * perCharacter(modelId),
      billed: { quantity: characters, unit: 'characters' },
    };
  },
};
