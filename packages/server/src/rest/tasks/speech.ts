/** Speech over HTTP: POST /v3/tts and OpenAI's POST /v1/audio/speech (the audio's bytes). */
import { z } from 'zod';
import type { TaskOutcome } from '../../dataplane/pipeline.ts';
import { metadata, params } from '../../dataplane/request.ts';
import {
  MAX_SPEECH_CHARACTERS,
  nativeSpeechSchema,
  type SpeechRequest,
  speechKind,
  speechRequest,
} from '../../dataplane/tasks/speech.ts';
import { parseWith } from '../../domain/errors.ts';
import { SPEECH_FORMATS, type SpeechAnswer } from '../../providers/tasks/speech.ts';
import type { NativeTask, OpenAITask } from './routes.ts';

export const nativeSpeech: NativeTask<SpeechRequest, SpeechAnswer> = {
  path: 'tts',
  kind: speechKind,
  doc: {
    summary: 'Speak a text through a gate',
    body: nativeSpeechSchema,
    ok: { description: '`audio` (base64, format, MIME type, duration) and `usage.characters`' },
  },
  parse(body) {
    const { data, gateId: _gateId, ...envelope } = parseWith(nativeSpeechSchema, body);
    return speechRequest(data, envelope);
  },
  answer(o: TaskOutcome<SpeechAnswer>) {
    return {
      audio: {
        base64: o.answer.audio.toString('base64'),
        format: o.answer.format,
        mimeType: o.answer.mimeType,
        duration: o.answer.seconds,
      },
      usage: { characters: o.answer.characters },
    };
  },
};

const openAISpeechSchema = z.object({
  model: params.model,
  input: z
    .string()
    .min(1, 'must not be empty')
    .max(MAX_SPEECH_CHARACTERS, `at most ${MAX_SPEECH_CHARACTERS} characters`),
  voice: z.union([z.string().min(1).max(100), z.object({ id: z.string().min(1).max(100) })]),
  instructions: z.string().max(MAX_SPEECH_CHARACTERS).optional(),
  response_format: z.enum(SPEECH_FORMATS).optional(),
  speed: z.number().min(0.25).max(4).optional(),
  stream_format: z.literal('audio', { error: 'only "audio" is served here' }).optional(),
  gateId: z.uuid().optional(),
  metadata: metadata.optional(),
});

export const openAISpeech: OpenAITask<SpeechRequest, SpeechAnswer> = {
  path: 'audio/speech',
  kind: speechKind,
  doc: {
    summary: "Speech, in OpenAI's wire format: the audio's bytes",
    body: openAISpeechSchema.loose(),
    ok: {
      description:
        'The audio; x-gatehouse-audio-format names the format made where it differs from the one asked',
      media: { 'audio/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
    },
  },
  parse(body, modelIsGate) {
    const b = parseWith(openAISpeechSchema, body);
    return speechRequest(
      {
        input: b.input,
        voice: typeof b.voice === 'string' ? b.voice : b.voice.id,
        ...(b.speed !== undefined && { speed: b.speed }),
        ...(b.response_format !== undefined && { responseFormat: b.response_format }),
        ...(b.instructions !== undefined && { instructions: b.instructions }),
      },
      { ...(!modelIsGate && { model: b.model }), ...(b.metadata && { metadata: b.metadata }) },
    );
  },
  answer(o) {
    const audio = o.answer.audio;
    return new Response(new Uint8Array(audio), {
      status: 200,
      headers: {
        'content-type': o.answer.mimeType,
        'content-length': String(audio.length),
        // The format answered, where it differs from the one asked (the mock and Gemini make WAV).
        'x-gatehouse-audio-format': o.answer.format,
      },
    });
  },
};
