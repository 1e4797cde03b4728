/**
 * Speech (text to speech) on each provider's wire: OpenAI's `/audio/speech` (binary audio in the
 * format asked), Gemini's TTS models (generateContent answering base64 PCM, wrapped here into a
 * WAV), and the mock's WAV of tones whose length follows the text.
 */
import { createHash } from 'node:crypto';
import { mediaNote, wavFile, wavInfo } from '../../domain/audioFile.ts';
import { postJson, postJsonForBytes } from '../http.ts';
import { mockMisbehaviour, withoutDirectives } from '../mock.ts';
import type { ProviderConnection } from '../registry.ts';
import { ProviderError, withWireRequest } from '../types.ts';
import { bearer, geminiHeaders, openAIPath, unsupported } from './common.ts';

export const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

export const SPEECH_MIME_TYPES: Record<SpeechFormat, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

export type SpeechParams = {
  input: string;
  voice?: string;
  speed?: number;
  /** The format asked for; a provider that cannot make it answers WAV and says so. */
  format: SpeechFormat;
  instructions?: string;
};

/** The characters a speech request is charged for: its text and its instructions. */
export const speechCharacters = (params: SpeechParams) =>
  [...params.input].length + [...(params.instructions ?? '')].length;

export type SpeechAnswer = {
  audio: Buffer;
  /** The characters charged (speechCharacters). */
  characters: number;
  /** The format the audio is in: the one asked, or `wav` where the provider could only make that. */
  format: SpeechFormat;
  mimeType: string;
  /** Seconds of speech, where the container can be read here (WAV); null otherwise. */
  seconds: number | null;
  providerRequest: unknown;
  providerResponse: unknown;
  media: [{ mimeType: string; data: Buffer }];
};

const OPENAI_VOICES = new Set([
  'alloy',
  'ash',
  'ballad',
  'coral',
  'echo',
  'fable',
  'onyx',
  'nova',
  'sage',
  'shimmer',
  'verse',
  'marin',
  'cedar',
]);

const GEMINI_VOICES = new Set(
  (
    'Zephyr Puck Charon Kore Fenrir Leda Orus Aoede Callirrhoe Autonoe Enceladus Iapetus Umbriel ' +
    'Algieba Despina Erinome Algenib Rasalgethi Laomedeia Achernar Alnilam Schedar Gacrux ' +
    'Pulcherrima Achird Zubenelgenubi Vindemiatrix Sadachbia Sadaltager Sulafat'
  ).split(' '),
);

/** A voice the provider knows: the one asked where it is the provider's, else its default (fallback across providers). */
function openAIVoice(voice: string | undefined): string {
  return voice && OPENAI_VOICES.has(voice.toLowerCase()) ? voice.toLowerCase() : 'alloy';
}

function geminiVoice(voice: string | undefined): string {
  const name = voice ? `${voice.charAt(0).toUpperCase()}${voice.slice(1).toLowerCase()}` : '';
  return GEMINI_VOICES.has(name) ? name : 'Kore';
}

function answerOf(
  params: SpeechParams,
  audio: Buffer,
  format: SpeechFormat,
  providerRequest: unknown,
  providerResponse: unknown,
): SpeechAnswer {
  const mimeType = SPEECH_MIME_TYPES[format];
  return {
    audio,
    characters: speechCharacters(params),
    format,
    mimeType,
    seconds: format === 'wav' ? (wavInfo(audio)?.seconds ?? null) : null,
    providerRequest,
    providerResponse,
    media: [{ mimeType, data: audio }],
  };
}

async function openAISpeech(
  conn: ProviderConnection,
  model: string,
  params: SpeechParams,
  signal: AbortSignal,
): Promise<SpeechAnswer> {
  const body = {
    model,
    input: params.input,
    voice: openAIVoice(params.voice),
    response_format: params.format,
    ...(params.speed !== undefined && { speed: params.speed }),
    ...(params.instructions !== undefined && { instructions: params.instructions }),
  };
  const { data, contentType } = await withWireRequest(
    () => body,
    postJsonForBytes(openAIPath(conn, '/audio/speech'), bearer(conn), body, signal),
  );
  if (data.length === 0) throw new ProviderError('invalid_response', 'The provider sent no audio');
  if (contentType?.startsWith('application/json')) {
    throw new ProviderError('invalid_response', 'The provider sent JSON where audio was expected');
  }
  const mimeType = SPEECH_MIME_TYPES[params.format];
  return answerOf(params, data, params.format, body, {
    contentType,
    audio: mediaNote(contentType ?? mimeType, data.length, 'stored as media 0'),
  });
}

type GeminiSpeech = {
  candidates?: { content?: { parts?: { inlineData?: { mimeType?: string; data?: string } }[] } }[];
};

async function geminiSpeech(
  conn: ProviderConnection,
  model: string,
  params: SpeechParams,
  signal: AbortSignal,
): Promise<SpeechAnswer> {
  // Gemini's TTS models take their style in the prompt itself ("Say cheerfully: …").
  const text = params.instructions ? `${params.instructions}: ${params.input}` : params.input;
  const body = {
    contents: [{ parts: [{ text }] }],
    generationConfig: {
      responseModalities: ['AUDIO'],
      speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: geminiVoice(params.voice) } } },
    },
  };
  const url = `${conn.baseUrl}/v1beta/models/${encodeURIComponent(model)}:generateContent`;
  const response = (await withWireRequest(
    () => body,
    postJson(url, geminiHeaders(conn), body, signal),
  )) as GeminiSpeech;
  const inline = response.candidates?.[0]?.content?.parts?.find((p) => p.inlineData?.data)?.inlineData;
  if (!inline?.data) throw new ProviderError('invalid_response', 'The provider sent no audio');
  // Raw PCM, signed 16-bit little-endian, mono, at the rate its type names (24 kHz by default).
  const rate = Number(/rate=(\d+)/.exec(inline.mimeType ?? '')?.[1] ?? 24_000);
  const pcm = Buffer.from(inline.data, 'base64');
  const wav = wavFile(pcm, rate);
  const logged = structuredClone(response);
  const part = logged.candidates?.[0]?.content?.parts?.find((p) => p.inlineData?.data);
  if (part?.inlineData) {
    part.inlineData.data = mediaNote(inline.mimeType ?? 'audio/pcm', pcm.length, 'stored as media 0 (WAV)');
  }
  return answerOf(params, wav, 'wav', body, logged);
}

export const MOCK_SPEECH_RATE = 16_000;
/** The mock speaks 60 ms per character at speed 1. */
export const MOCK_MS_PER_CHARACTER = 60;

/** The mock's speech: per character a short tone whose pitch the text decides, as a WAV. */
export function mockSpeechWav(text: string, speed = 1): Buffer {
  const chars = [...text];
  const perChar = Math.max(1, Math.round((MOCK_SPEECH_RATE * MOCK_MS_PER_CHARACTER) / 1000 / speed));
  const pcm = Buffer.alloc(chars.length * perChar * 2);
  const seed = createHash('sha256').update(text).digest();
  for (const [i, ch] of chars.entries()) {
    const pitch = 180 + (((ch.codePointAt(0) ?? 0) * 7 + (seed[i % seed.length] as number)) % 40) * 15;
    for (let s = 0; s < perChar; s++) {
      // A short fade at both ends of each tone keeps it from clicking.
      const envelope = Math.min(1, s / 80, (perChar - s) / 80);
      const sample = Math.sin((2 * Math.PI * pitch * s) / MOCK_SPEECH_RATE) * envelope * 0.3;
      pcm.writeInt16LE(Math.round(sample * 32767), (i * perChar + s) * 2);
    }
  }
  return wavFile(pcm, MOCK_SPEECH_RATE);
}

async function mockSpeech(
  conn: ProviderConnection,
  model: string,
  params: SpeechParams,
  signal: AbortSignal,
): Promise<SpeechAnswer> {
  const request = { model, ...params };
  return withWireRequest(
    () => request,
    (async () => {
      await mockMisbehaviour(params.input, model, { latencyMs: conn.mockLatencyMs, signal });
      const text = withoutDirectives(params.input) || params.input;
      const wav = mockSpeechWav(text, params.speed ?? 1);
      return answerOf(params, wav, 'wav', request, {
        audio: mediaNote('audio/wav', wav.length, 'stored as media 0'),
        format: 'wav',
        ...(params.format !== 'wav' && {
          note: `the mock makes WAV only: ${params.format} was asked, WAV was answered`,
        }),
      });
    })(),
  );
}

export function speak(
  conn: ProviderConnection,
  model: string,
  params: SpeechParams,
  signal: AbortSignal,
): Promise<SpeechAnswer> {
  switch (conn.descriptor.wire.format) {
    case 'openai':
      return openAISpeech(conn, model, params, signal);
    case 'gemini':
      return geminiSpeech(conn, model, params, signal);
    case 'mock':
      return mockSpeech(conn, model, params, signal);
    default:
      return Promise.reject(unsupported(conn, 'speech'));
  }
}
