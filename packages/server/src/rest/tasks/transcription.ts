/**
 * Transcription and translation over HTTP: POST /v3/stt and /v3/audio (the audio in base64 JSON
 * or as a multipart `file`), and OpenAI's multipart POST /v1/audio/transcriptions and
 * /v1/audio/translations, answered in the `response_format` asked (json, text, verbose_json,
 * srt, vtt) in OpenAI's exact shapes.
 */
import type { Context } from 'hono';
import { z } from 'zod';
import type { TaskKind, TaskOutcome } from '../../dataplane/pipeline.ts';
import { params } from '../../dataplane/request.ts';
import {
  nativeTranscriptionSchema,
  TRANSCRIPT_FORMATS,
  type TranscriptFormat,
  type TranscriptionRequest,
  transcriptionFields,
  transcriptionKind,
  transcriptionRequest,
  translationKind,
} from '../../dataplane/tasks/transcription.ts';
import { parseWith, ValidationError } from '../../domain/errors.ts';
import { readJson } from '../../http/errors.ts';
import { readMultipart as readForm } from '../../http/multipart.ts';
import type { Segment, TranscriptionAnswer } from '../../providers/tasks/transcription.ts';
import type { BodyReader, NativeTask, OpenAITask } from './routes.ts';

/** A multipart body as fields, its `file` as bytes: what the parsers below read. */
type MultipartBody = { multipart: true; fields: Record<string, string>; file: File | null };

const isMultipart = (body: unknown): body is MultipartBody =>
  (body as MultipartBody | null)?.multipart === true;

/** Reads the body as multipart form data, at most `maxBytes` long and within MULTIPART_LIMITS. */
async function readMultipart(c: Context, maxBytes: number): Promise<MultipartBody> {
  const { fields, files } = await readForm(c, maxBytes);
  return { multipart: true, fields, file: files.file ?? null };
}

/** JSON, or multipart where the client sends it. */
const readAudioBody: BodyReader = async (c, maxBytes) => {
  if (/^multipart\/form-data/i.test(c.req.header('content-type') ?? '')) return readMultipart(c, maxBytes);
  return readJson(c, maxBytes);
};

async function uploadOf(file: File | null) {
  if (!file) throw new ValidationError([{ path: 'file', message: 'is required: the audio file' }]);
  return { bytes: Buffer.from(await file.arrayBuffer()), filename: file.name, mimeType: file.type };
}

/** Multipart's fields are text: numbers are read as numbers, so the schema names bad ones. */
const numberField = (value: string | undefined) =>
  value === undefined || value.trim() === '' || Number.isNaN(Number(value)) ? value : Number(value);

const multipartFields = z.strictObject({
  ...transcriptionFields,
  gateId: z.string().optional(),
  model: params.model.optional(),
  sessionId: z.string().min(1).max(200).optional(),
});

function fileFirst(body: MultipartBody): Promise<{ bytes: Buffer; filename: string; mimeType: string }> {
  return uploadOf(body.file);
}

/**
 * The native request from either body. Multipart is read before the pipeline runs (its file's
 * bytes come from a promise), so the parsed upload travels in the body object.
 */
function nativeParse(translate: boolean) {
  return (body: unknown): TranscriptionRequest => {
    if (isMultipart(body)) {
      const upload = (body as MultipartBody & { upload?: Awaited<ReturnType<typeof fileFirst>> }).upload;
      if (!upload) throw new ValidationError([{ path: 'file', message: 'is required: the audio file' }]);
      const {
        gateId: _g,
        model,
        sessionId,
        ...fields
      } = parseWith(multipartFields, {
        ...body.fields,
        ...(body.fields.temperature !== undefined && { temperature: numberField(body.fields.temperature) }),
      });
      return transcriptionRequest(
        upload,
        fields,
        { ...(model !== undefined && { model }), ...(sessionId !== undefined && { sessionId }) },
        translate,
        'file',
      );
    }
    const { data, gateId: _gateId, ...envelope } = parseWith(nativeTranscriptionSchema, body);
    const { audio, ...fields } = data;
    return transcriptionRequest(
      { bytes: Buffer.from(audio, 'base64'), filename: data.filename, mimeType: data.mimeType },
      fields,
      envelope,
      translate,
      'data.audio',
    );
  };
}

/** Reads the body and, for multipart, its file's bytes (the parsers are synchronous). */
const readNativeAudio: BodyReader = async (c, maxBytes) => {
  const body = await readAudioBody(c, maxBytes);
  if (!isMultipart(body)) return body;
  // The route reads the gate from `gateId`: a multipart body carries it as a field.
  return { ...body, gateId: body.fields.gateId, upload: body.file ? await fileFirst(body) : undefined };
};

/** The audio's seconds: as the provider heard them, else the file's own where exact; null if neither. */
const durationOf = (o: TaskOutcome<TranscriptionAnswer>) => o.answer.seconds ?? o.answer.fileSeconds;

const pad = (n: number, width = 2) => String(Math.floor(n)).padStart(width, '0');

/** `HH:MM:SS,mmm` (srt) or `HH:MM:SS.mmm` (vtt). */
function timestamp(t: number, separator: ',' | '.'): string {
  const ms = Math.round(t * 1000);
  return `${pad(ms / 3_600_000)}:${pad((ms / 60_000) % 60)}:${pad((ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

function segmentsOf(answer: TranscriptionAnswer, duration: number): Segment[] {
  return answer.segments ?? [{ id: 0, start: 0, end: duration, text: answer.text }];
}

function subtitles(format: 'srt' | 'vtt', segments: Segment[]): string {
  const cues = segments.map((s, i) => {
    const times = `${timestamp(s.start, format === 'srt' ? ',' : '.')} --> ${timestamp(s.end, format === 'srt' ? ',' : '.')}`;
    return `${format === 'srt' ? `${i + 1}\n` : ''}${times}\n${s.text.trim()}\n`;
  });
  return `${format === 'vtt' ? 'WEBVTT\n\n' : ''}${cues.join('\n')}\n`;
}

function nativeTask(
  path: string,
  kind: TaskKind<TranscriptionRequest, unknown, TranscriptionAnswer>,
  translate: boolean,
): NativeTask<TranscriptionRequest, TranscriptionAnswer> {
  const parse = nativeParse(translate);
  return {
    path,
    kind,
    doc: {
      summary: translate
        ? 'Translate speech into English text through a gate'
        : 'Transcribe speech through a gate',
      body: [
        { media: 'application/json', schema: nativeTranscriptionSchema },
        { media: 'multipart/form-data', schema: multipartFields.extend({ file: z.file() }) },
      ],
      ok: { description: '`text`, with `segments`, `language`, `duration` and subtitles where asked' },
    },
    read: readNativeAudio,
    parse,
    answer(o, body) {
      const format = isMultipart(body)
        ? (body.fields.responseFormat as TranscriptFormat | undefined)
        : (body as { data?: { responseFormat?: TranscriptFormat } }).data?.responseFormat;
      const duration = durationOf(o);
      return {
        text: o.answer.text,
        ...(o.answer.segments && { segments: o.answer.segments }),
        ...(o.answer.language && { language: o.answer.language }),
        duration,
        ...((format === 'srt' || format === 'vtt') && {
          [format]: subtitles(format, segmentsOf(o.answer, duration ?? 0)),
        }),
      };
    },
  };
}

export const nativeTranscription = nativeTask('stt', transcriptionKind, false);
export const nativeTranslation = nativeTask('audio', translationKind, true);

const openAIFields = z.object({
  model: params.model,
  language: transcriptionFields.language,
  prompt: transcriptionFields.prompt,
  response_format: z.enum(TRANSCRIPT_FORMATS).optional(),
  temperature: transcriptionFields.temperature,
  gateId: z.uuid().optional(),
  // OpenAI's options the gateway accepts and leaves to the provider's defaults.
  'timestamp_granularities[]': z.string().optional(),
  'include[]': z.string().optional(),
  stream: z.enum(['false']).optional(),
});

function openAITask(
  path: string,
  kind: TaskKind<TranscriptionRequest, unknown, TranscriptionAnswer>,
  translate: boolean,
): OpenAITask<TranscriptionRequest, TranscriptionAnswer> {
  return {
    path,
    kind,
    doc: {
      summary: translate
        ? "Translations into English, in OpenAI's wire format"
        : "Transcriptions, in OpenAI's wire format",
      body: [{ media: 'multipart/form-data', schema: openAIFields.extend({ file: z.file() }).loose() }],
      ok: {
        description: 'In the `response_format` asked: JSON (json, verbose_json) or text (text, srt, vtt)',
        media: { 'text/plain': { schema: { type: 'string' } } },
      },
    },
    async read(c, maxBytes) {
      if (!/^multipart\/form-data/i.test(c.req.header('content-type') ?? '')) {
        throw new ValidationError([{ path: 'file', message: 'send the audio as multipart/form-data' }]);
      }
      const body = await readMultipart(c, maxBytes);
      // gateOf (and so modelIsGate) reads the body's gateId and model. The fields come first: one
      // named `fields`, `file` or `multipart` must not stand in for what was parsed.
      return { ...body.fields, ...body, upload: body.file ? await fileFirst(body) : undefined };
    },
    parse(body, modelIsGate) {
      const b = body as MultipartBody & { upload?: Awaited<ReturnType<typeof fileFirst>> };
      const f = parseWith(openAIFields, {
        ...b.fields,
        ...(b.fields.temperature !== undefined && { temperature: numberField(b.fields.temperature) }),
      });
      if (!b.upload) throw new ValidationError([{ path: 'file', message: 'is required: the audio file' }]);
      return transcriptionRequest(
        b.upload,
        {
          ...(f.language !== undefined && { language: f.language }),
          ...(f.prompt !== undefined && { prompt: f.prompt }),
          ...(f.temperature !== undefined && { temperature: f.temperature }),
          ...(f.response_format !== undefined && { responseFormat: f.response_format }),
        },
        { ...(!modelIsGate && { model: f.model }) },
        translate,
        'file',
      );
    },
    answer(o, body) {
      const b = body as MultipartBody;
      const format = (b.fields.response_format ?? 'json') as TranscriptFormat;
      const duration = durationOf(o) ?? 0;
      const usage =
        durationOf(o) === null ? {} : { usage: { type: 'duration', seconds: Math.ceil(duration) } };
      switch (format) {
        case 'text':
          return textResponse(`${o.answer.text}\n`);
        case 'srt':
        case 'vtt':
          return textResponse(subtitles(format, segmentsOf(o.answer, duration)));
        case 'verbose_json':
          return {
            task: translate ? 'translate' : 'transcribe',
            language: o.answer.language ?? (translate ? 'english' : 'unknown'),
            duration,
            text: o.answer.text,
            segments: segmentsOf(o.answer, duration).map((s) => ({
              id: s.id,
              seek: 0,
              start: s.start,
              end: s.end,
              text: s.text,
              tokens: [],
              temperature: 0,
              avg_logprob: 0,
              compression_ratio: 1,
              no_speech_prob: 0,
            })),
            ...(!translate && usage),
          };
        default:
          return { text: o.answer.text, ...(!translate && usage) };
      }
    },
  };
}

function textResponse(text: string): Response {
  return new Response(text, { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' } });
}

export const openAITranscription = openAITask('audio/transcriptions', transcriptionKind, false);
export const openAITranslation = openAITask('audio/translations', translationKind, true);
