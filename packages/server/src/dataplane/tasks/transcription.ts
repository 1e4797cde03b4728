/**
 * Transcription (stt) and translation to English (audio) through a gate: an audio file → its
 * text. Priced per minute of audio; a block gate reserves the most the file can play (audioFile.ts:
 * for WAV from its samples, never its stated byte rate alone; for the compressed containers from
 * its size) at the dearest per-minute price, and refuses it (402) where that does not fit. The
 * answer is charged the seconds the provider reports, never more than reserved.
 */
import { z } from 'zod';
import { AUDIO_MIME_TYPES, audioContainer, audioDuration } from '../../domain/audioFile.ts';
import { findModel } from '../../domain/catalog.ts';
import { ValidationError } from '../../domain/errors.ts';
import type { Gate } from '../../generated/prisma/client.ts';
import {
  type TranscriptionAnswer,
  type TranscriptionParams,
  transcribe,
} from '../../providers/tasks/transcription.ts';
import { connectionFor, mergeModel, type TaskKind, type TaskRequestBase } from '../pipeline.ts';
import { countOf } from '../usage.ts';
import { envelopeFields, nativeEnvelope } from './common.ts';

export const TRANSCRIPT_FORMATS = ['json', 'text', 'verbose_json', 'srt', 'vtt'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

/** The fields a transcription request carries besides its file, JSON and multipart alike. */
export const transcriptionFields = {
  mimeType: z.string().min(1).max(100).optional(),
  filename: z.string().min(1).max(255).optional(),
  language: z
    .string()
    .regex(/^[a-z]{2,3}$/, 'must be an ISO-639-1 code such as "en"')
    .optional(),
  prompt: z.string().max(4000).optional(),
  responseFormat: z.enum(TRANSCRIPT_FORMATS).optional(),
  temperature: z.number().min(0).max(1).optional(),
};

export const transcriptionData = z.strictObject({
  audio: z.base64('must be the audio file in base64').min(1, 'must not be empty'),
  ...transcriptionFields,
});

export const nativeTranscriptionSchema = nativeEnvelope(transcriptionData);

export type TranscriptionRequest = TaskRequestBase & TranscriptionParams & { format: TranscriptFormat };

const NOT_AUDIO = 'is not an audio file this gateway reads (WAV, MP3, M4A/MP4, OGG, WebM or FLAC)';

/** An uploaded file: its bytes, and what the client says it is. */
export type AudioUpload = { bytes: Buffer; filename?: string | undefined; mimeType?: string | undefined };

/**
 * The request for `upload`, refused with a 400 at `filePath` (`file`, `data.audio`) when the
 * bytes are not audio. The container is read from the bytes, whatever the name or type claimed.
 */
export function transcriptionRequest(
  upload: AudioUpload,
  fields: Omit<z.infer<typeof transcriptionData>, 'audio'>,
  envelope: Parameters<typeof envelopeFields>[0],
  translate: boolean,
  filePath: string,
): TranscriptionRequest {
  const container = audioContainer(upload.bytes);
  const duration = audioDuration(upload.bytes);
  if (container === null || duration === null) {
    throw new ValidationError([{ path: filePath, message: NOT_AUDIO }]);
  }
  const mimeType = AUDIO_MIME_TYPES[container];
  const stem = (upload.filename ?? 'audio').replace(/\.[^.]*$/, '') || 'audio';
  return {
    audio: upload.bytes,
    mimeType,
    // The extension tells OpenAI the container: it is the one read from the bytes.
    filename: `${stem}.${container}`,
    seconds: duration.seconds,
    statedSeconds: duration.stated,
    ...(fields.language !== undefined && !translate && { language: fields.language }),
    ...(fields.prompt !== undefined && { prompt: fields.prompt }),
    ...(fields.temperature !== undefined && { temperature: fields.temperature }),
    translate,
    format: fields.responseFormat ?? 'json',
    ...envelopeFields(envelope),
  };
}

const perMinute = (modelId: string) => findModel(modelId)?.unitPrices.perMinute ?? 0;

/**
 * The seconds an answer is charged: the provider's count (or, where it reports none, the most the
 * file can play), never more than the reservation's bound.
 */
export function chargedSeconds(params: TranscriptionParams, answer: TranscriptionAnswer): number {
  const heard =
    answer.seconds === null ? params.seconds : countOf('seconds heard', 'seconds', answer.seconds);
  return Math.min(heard, params.seconds);
}

function kindFor(
  taskType: 'stt' | 'audio',
  noun: string,
): TaskKind<TranscriptionRequest, TranscriptionParams, TranscriptionAnswer> {
  return {
    taskType,
    noun,
    merge(gate: Gate, request: TranscriptionRequest) {
      const { model, ignoredOverrides } = mergeModel(gate, request);
      const { model: _m, sessionId: _s, metadata: _md, format: _f, ...params } = request;
      return { model, params, ignoredOverrides };
    },
    worstCase: (models, params) => (params.seconds / 60) * Math.max(0, ...models.map((id) => perMinute(id))),
    attempt: (a) => transcribe(connectionFor(a), a.model.providerModel, a.params, a.timing.signal),
    price: (_model, modelId, params, answer) => {
      const seconds = chargedSeconds(params, answer);
      return {
        usage: { promptTokens: 0, completionTokens: 0 },
        tokensEstimated: false,
        costUsd: (seconds / 60) * perMinute(modelId),
        billed: { quantity: seconds, unit: 'seconds' },
      };
    },
  };
}

export const transcriptionKind = kindFor('stt', 'transcription');
export const translationKind = kindFor('audio', 'translation');
