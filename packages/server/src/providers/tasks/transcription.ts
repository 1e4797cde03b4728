/**
 * Transcription and translation (to English) of an audio file on each provider's wire: OpenAI's
 * `/audio/transcriptions` and `/audio/translations` (multipart; OpenAI and the compatible family,
 * Groq among them), and the mock's deterministic sentence naming the audio's duration.
 */
import { Blob } from 'node:buffer';
import { FormData } from 'undici';
import { mediaNote } from '../../domain/audioFile.ts';
import { postMultipart } from '../http.ts';
import { mockMisbehaviour } from '../mock.ts';
import type { ProviderConnection } from '../registry.ts';
import { ProviderError, withWireRequest } from '../types.ts';
import { bearer, openAIPath, unsupported } from './common.ts';

export type TranscriptionParams = {
  audio: Buffer;
  mimeType: string;
  filename: string;
  /** The most seconds the file can play (audioDuration): what is reserved, and the most charged. */
  seconds: number;
  /** What the file's header says it plays, where a WAV header says so consistently; null otherwise. */
  statedSeconds: number | null;
  /** Transcription only: the language spoken (ISO-639-1), where the client knows it. */
  language?: string;
  prompt?: string;
  temperature?: number;
  /** To English (`/audio/translations`) rather than in the language spoken. */
  translate: boolean;
};

export type Segment = { id: number; start: number; end: number; text: string };

export type TranscriptionAnswer = {
  text: string;
  segments: Segment[] | null;
  language: string | null;
  /** The seconds the provider reports it heard; null where it reports none. */
  seconds: number | null;
  /** The file's own seconds where its header states them consistently (WAV); null otherwise. */
  fileSeconds: number | null;
  providerRequest: unknown;
  providerResponse: unknown;
};

type OpenAITranscription = {
  text?: unknown;
  language?: unknown;
  duration?: unknown;
  segments?: { id?: number; start?: number; end?: number; text?: string }[];
  usage?: { type?: string; seconds?: number };
};

/** What was sent, for the log: the form's fields, with a note for the file. */
function formNote(model: string, params: TranscriptionParams, fields: Record<string, string>) {
  return {
    model,
    file: mediaNote(params.mimeType, params.audio.length, `${params.filename}, not logged`),
    ...fields,
  };
}

async function openAITranscribe(
  conn: ProviderConnection,
  model: string,
  params: TranscriptionParams,
  signal: AbortSignal,
): Promise<TranscriptionAnswer> {
  // Whisper's verbose JSON carries the language, duration and segments; the gpt-4o transcribe
  // models answer plain JSON only.
  const fields: Record<string, string> = {
    response_format: /whisper/i.test(model) ? 'verbose_json' : 'json',
    ...(params.language !== undefined && !params.translate && { language: params.language }),
    ...(params.prompt !== undefined && { prompt: params.prompt }),
    ...(params.temperature !== undefined && { temperature: String(params.temperature) }),
  };
  const form = new FormData();
  form.append('file', new Blob([params.audio], { type: params.mimeType }), params.filename);
  form.append('model', model);
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const path = params.translate ? '/audio/translations' : '/audio/transcriptions';
  const request = formNote(model, params, fields);
  const response = (await withWireRequest(
    () => request,
    postMultipart(openAIPath(conn, path), bearer(conn), form, signal),
  )) as OpenAITranscription;
  if (typeof response.text !== 'string') {
    throw new ProviderError('invalid_response', 'The provider sent no transcript');
  }
  const reported =
    typeof response.duration === 'number'
      ? response.duration
      : response.usage?.type === 'duration' && typeof response.usage.seconds === 'number'
        ? response.usage.seconds
        : null;
  const segments = Array.isArray(response.segments)
    ? response.segments.map((s, i) => ({
        id: s.id ?? i,
        start: s.start ?? 0,
        end: s.end ?? 0,
        text: s.text ?? '',
      }))
    : null;
  return {
    text: response.text,
    segments,
    language: typeof response.language === 'string' ? response.language : null,
    seconds: reported,
    fileSeconds: params.statedSeconds,
    providerRequest: request,
    providerResponse: response,
  };
}

async function mockTranscribe(
  conn: ProviderConnection,
  model: string,
  params: TranscriptionParams,
  signal: AbortSignal,
): Promise<TranscriptionAnswer> {
  const request = formNote(model, params, {
    ...(params.language !== undefined && { language: params.language }),
    ...(params.prompt !== undefined && { prompt: params.prompt }),
    translate: String(params.translate),
  });
  return withWireRequest(
    () => request,
    (async () => {
      // The mock's directives ride in the prompt: a file has no text to carry them.
      await mockMisbehaviour(params.prompt ?? '', model, { latencyMs: conn.mockLatencyMs, signal });
      // The mock hears what the header says plays, as a decoder would.
      const seconds = Number((params.statedSeconds ?? params.seconds).toFixed(3));
      const text = params.translate
        ? `Mock English translation of ${seconds} seconds of audio.`
        : `Mock transcript of ${seconds} seconds of audio.`;
      const language = params.translate ? 'english' : (params.language ?? 'english');
      const segments = [{ id: 0, start: 0, end: seconds, text }];
      return {
        text,
        segments,
        language,
        seconds,
        fileSeconds: params.statedSeconds,
        providerRequest: request,
        providerResponse: { text, language, duration: seconds, segments },
      };
    })(),
  );
}

export function transcribe(
  conn: ProviderConnection,
  model: string,
  params: TranscriptionParams,
  signal: AbortSignal,
): Promise<TranscriptionAnswer> {
  switch (conn.descriptor.wire.format) {
    case 'openai':
      return openAITranscribe(conn, model, params, signal);
    case 'mock':
      return mockTranscribe(conn, model, params, signal);
    default:
      return Promise.reject(unsupported(conn, params.translate ? 'translation' : 'transcription'));
  }
}
