/**
 * What the catalog knows beyond @pydantic/genai-prices: the mock provider's models, and for the
 * media task types the models genai-prices lacks or prices by tokens only, with the prices per
 * unit their providers publish (checked on the date below). A row whose id genai-prices knows
 * keeps genai-prices' token prices and takes its task types and unit prices from here.
 *
 * Prices as published on 2026-11-23: OpenAI (platform.openai.com/docs/pricing), Google
 * (ai.google.dev/gemini-api/docs/pricing), Mistral (mistral.ai/pricing).
 */
import type { TaskType } from '@gatehouse/rules/gate';

/** USD per unit of what the media task types produce or read. */
export type UnitPrices = {
  /** Per image, by `${size}/${quality}`, `${size}` or `default`, the first that is listed. */
  perImage?: Record<string, number>;
  /** Per million characters of text spoken (speech). */
  perMCharacters?: number;
  /** Per minute of audio read (transcription, translation). */
  perMinute?: number;
  /** Per second of video made. */
  perSecond?: number;
  /** Per page read (OCR). */
  perPage?: number;
};

export type LocalModel = {
  /** `provider/model`. */
  id: string;
  name: string;
  taskTypes: TaskType[];
  inputPerMTok?: number;
  outputPerMTok?: number;
  contextWindow?: number;
  unitPrices?: UnitPrices;
  /** Embedding models: the length of the vectors they answer when no `dimensions` is asked. */
  dimensions?: number;
};

export const LOCAL_CATALOG: LocalModel[] = [
  // The built-in mock provider: every task type, no network.
  {
    id: 'mock/echo',
    name: 'Mock echo: repeats the last user message',
    taskTypes: ['chat'],
    inputPerMTok: 1,
    outputPerMTok: 2,
    contextWindow: 128_000,
  },
  {
    id: 'mock/fast',
    name: 'Mock fast chat',
    taskTypes: ['chat'],
    inputPerMTok: 0.5,
    outputPerMTok: 1,
    contextWindow: 128_000,
  },
  {
    id: 'mock/smart',
    name: 'Mock smart chat',
    taskTypes: ['chat'],
    inputPerMTok: 3,
    outputPerMTok: 15,
    contextWindow: 128_000,
  },
  {
    id: 'mock/embed',
    name: 'Mock embeddings',
    taskTypes: ['embeddings'],
    inputPerMTok: 0.1,
    contextWindow: 8_192,
    dimensions: 1536,
  },
  {
    id: 'mock/embed-large',
    name: 'Mock embeddings, large',
    taskTypes: ['embeddings'],
    inputPerMTok: 0.13,
    contextWindow: 8_192,
    dimensions: 3072,
  },
  {
    id: 'mock/image',
    name: 'Mock image generation',
    taskTypes: ['image'],
    unitPrices: { perImage: { default: 0.01 } },
  },

  // Embeddings, with the vector length each answers by default (its provider's model docs): a
  // fallback of another length is noted on the answer (dataplane/tasks/embeddings.ts).
  {
    id: 'openai/text-embedding-3-small',
    name: 'text-embedding-3-small',
    taskTypes: ['embeddings'],
    dimensions: 1536,
  },
  {
    id: 'openai/text-embedding-3-large',
    name: 'text-embedding-3-large',
    taskTypes: ['embeddings'],
    dimensions: 3072,
  },
  {
    id: 'openai/text-embedding-ada-002',
    name: 'text-embedding-ada-002',
    taskTypes: ['embeddings'],
    dimensions: 1536,
  },
  {
    id: 'gemini/gemini-embedding-001',
    name: 'Gemini Embedding 001',
    taskTypes: ['embeddings'],
    dimensions: 3072,
  },
  {
    id: 'gemini/text-embedding-004',
    name: 'Text Embedding 004',
    taskTypes: ['embeddings'],
    inputPerMTok: 0,
    dimensions: 768,
  },
  { id: 'mistral/mistral-embed', name: 'Mistral Embed', taskTypes: ['embeddings'], dimensions: 1024 },
  {
    id: 'mistral/codestral-embed',
    name: 'Codestral Embed',
    taskTypes: ['embeddings'],
    inputPerMTok: 0.15,
    dimensions: 1536,
  },

  // Moderation. OpenAI's are free (genai-prices lists them without a price); Mistral's is priced
  // per token (mistral.ai/pricing: $0.10 per 1M tokens), and genai-prices lacks it.
  {
    id: 'mistral/mistral-moderation-latest',
    name: 'Mistral Moderation',
    taskTypes: ['moderation'],
    inputPerMTok: 0.1,
  },
  {
    id: 'mistral/mistral-moderation-2411',
    name: 'Mistral Moderation 24.11',
    taskTypes: ['moderation'],
    inputPerMTok: 0.1,
  },
  { id: 'mock/moderation', name: 'Mock moderation: flags by keyword', taskTypes: ['moderation'] },

  // OCR. genai-prices prices Mistral's OCR models per thousand pages (mistral-ocr-latest $1);
  // the mock reads at $0.001 a page.
  {
    id: 'mock/ocr',
    name: 'Mock OCR: pages derived from the input',
    taskTypes: ['ocr'],
    unitPrices: { perPage: 0.001 },
  },

  // Speech, transcription and translation (issue 12). OpenAI prices tts-1 and tts-1-hd per
  // character and the transcription models per minute. gpt-4o-mini-tts is priced by tokens
  // ($0.60/1M text in, $12/1M audio out): about $0.015 a minute of speech, which OpenAI itself
  // quotes; at ~1,000 characters a minute that is ~$15 per 1M characters, the approximation used.
  // Gemini's TTS models are priced by tokens too ($10 / $20 per 1M audio tokens out for flash /
  // pro, 25 audio tokens a second): speech runs ~12-15 characters a second, so ~2 audio tokens a
  // character, plus the text in: ~$20 per 1M characters for flash, ~$40 for pro, rounded up.
  // genai-prices gives whisper-1 and Groq's whisper models per audio hour (kept: $0.006/min,
  // $0.111/h, $0.04/h); the gpt-4o transcribe models only by token, so per minute here.
  {
    id: 'mock/tts',
    name: 'Mock speech: a WAV of tones, 60 ms per character',
    taskTypes: ['tts'],
    unitPrices: { perMCharacters: 15 },
  },
  {
    id: 'mock/stt',
    name: 'Mock transcription and translation',
    taskTypes: ['stt', 'audio'],
    unitPrices: { perMinute: 0.006 },
  },
  { id: 'openai/tts-1', name: 'TTS-1', taskTypes: ['tts'], unitPrices: { perMCharacters: 15 } },
  { id: 'openai/tts-1-hd', name: 'TTS-1 HD', taskTypes: ['tts'], unitPrices: { perMCharacters: 30 } },
  {
    id: 'openai/gpt-4o-mini-tts',
    name: 'GPT-4o mini TTS',
    taskTypes: ['tts'],
    unitPrices: { perMCharacters: 15 },
  },
  {
    id: 'gemini/gemini-2.5-flash-preview-tts',
    name: 'Gemini 2.5 Flash Preview TTS',
    taskTypes: ['tts'],
    unitPrices: { perMCharacters: 20 },
  },
  {
    id: 'gemini/gemini-2.5-pro-preview-tts',
    name: 'Gemini 2.5 Pro Preview TTS',
    taskTypes: ['tts'],
    unitPrices: { perMCharacters: 40 },
  },
  {
    id: 'gemini/gemini-2.5-flash-tts',
    name: 'Gemini 2.5 Flash TTS',
    taskTypes: ['tts'],
    unitPrices: { perMCharacters: 20 },
  },
  {
    id: 'gemini/gemini-2.5-pro-tts',
    name: 'Gemini 2.5 Pro TTS',
    taskTypes: ['tts'],
    unitPrices: { perMCharacters: 40 },
  },
  { id: 'openai/whisper-1', name: 'Whisper', taskTypes: ['stt', 'audio'], unitPrices: { perMinute: 0.006 } },
  {
    id: 'openai/gpt-4o-transcribe',
    name: 'GPT-4o Transcribe',
    taskTypes: ['stt'],
    unitPrices: { perMinute: 0.006 },
  },
  {
    id: 'openai/gpt-4o-mini-transcribe',
    name: 'GPT-4o mini Transcribe',
    taskTypes: ['stt'],
    unitPrices: { perMinute: 0.003 },
  },
  {
    id: 'groq/whisper-large-v3',
    name: 'Whisper Large v3 (Groq)',
    taskTypes: ['stt', 'audio'],
    unitPrices: { perMinute: 0.111 / 60 },
  },
  {
    id: 'groq/whisper-large-v3-turbo',
    name: 'Whisper Large v3 Turbo (Groq)',
    taskTypes: ['stt', 'audio'],
    unitPrices: { perMinute: 0.04 / 60 },
  },

  // Image generation, priced per image by `${size}/${quality}` (see UnitPrices.perImage).
  {
    id: 'openai/dall-e-2',
    name: 'DALL·E 2',
    taskTypes: ['image'],
    unitPrices: { perImage: { '256x256': 0.016, '512x512': 0.018, '1024x1024': 0.02 } },
  },
  {
    id: 'openai/dall-e-3',
    name: 'DALL·E 3',
    taskTypes: ['image'],
    unitPrices: {
      perImage: {
        '1024x1024/standard': 0.04,
        '1024x1792/standard': 0.08,
        '1792x1024/standard': 0.08,
        '1024x1024/hd': 0.08,
        '1024x1792/hd': 0.12,
        '1792x1024/hd': 0.12,
      },
    },
  },
  {
    id: 'openai/gpt-image-1',
    name: 'GPT Image 1',
    taskTypes: ['image'],
    unitPrices: {
      perImage: {
        '1024x1024/low': 0.011,
        '1024x1024/medium': 0.042,
        '1024x1024/high': 0.167,
        '1024x1536/low': 0.016,
        '1024x1536/medium': 0.063,
        '1024x1536/high': 0.25,
        '1536x1024/low': 0.016,
        '1536x1024/medium': 0.063,
        '1536x1024/high': 0.25,
      },
    },
  },
  {
    id: 'openai/gpt-image-1-mini',
    name: 'GPT Image 1 Mini',
    taskTypes: ['image'],
    unitPrices: {
      perImage: {
        '1024x1024/low': 0.005,
        '1024x1024/medium': 0.011,
        '1024x1024/high': 0.036,
        '1024x1536/low': 0.006,
        '1024x1536/medium': 0.015,
        '1024x1536/high': 0.052,
        '1536x1024/low': 0.006,
        '1536x1024/medium': 0.015,
        '1536x1024/high': 0.052,
      },
    },
  },
  {
    id: 'gemini/imagen-3.0-generate-002',
    name: 'Imagen 3',
    taskTypes: ['image'],
    unitPrices: { perImage: { default: 0.03 } },
  },
  {
    id: 'gemini/imagen-4.0-generate-001',
    name: 'Imagen 4',
    taskTypes: ['image'],
    unitPrices: { perImage: { default: 0.04 } },
  },
  {
    id: 'gemini/imagen-4.0-fast-generate-001',
    name: 'Imagen 4 Fast',
    taskTypes: ['image'],
    unitPrices: { perImage: { default: 0.02 } },
  },
  {
    id: 'gemini/imagen-4.0-ultra-generate-001',
    name: 'Imagen 4 Ultra',
    taskTypes: ['image'],
    unitPrices: { perImage: { default: 0.06 } },
  },

  // Video, priced per second of video (UnitPrices.perSecond). sora-2-pro costs $0.30/s at 720p
  // and $0.50/s at 1024x1792 / 1792x1024: one price per model here, so the dearer one, which a
  // block limit can trust whatever the size. Veo's prices are Google's per second of video (with
  // audio for Veo 3).
  {
    id: 'mock/video',
    name: 'Mock video: an animated GIF',
    taskTypes: ['video'],
    unitPrices: { perSecond: 0.05 },
  },
  { id: 'openai/sora-2', name: 'Sora 2', taskTypes: ['video'], unitPrices: { perSecond: 0.1 } },
  { id: 'openai/sora-2-pro', name: 'Sora 2 Pro', taskTypes: ['video'], unitPrices: { perSecond: 0.5 } },
  { id: 'gemini/veo-2.0-generate-001', name: 'Veo 2', taskTypes: ['video'], unitPrices: { perSecond: 0.35 } },
  { id: 'gemini/veo-3.0-generate-001', name: 'Veo 3', taskTypes: ['video'], unitPrices: { perSecond: 0.4 } },
  {
    id: 'gemini/veo-3.0-fast-generate-001',
    name: 'Veo 3 Fast',
    taskTypes: ['video'],
    unitPrices: { perSecond: 0.15 },
  },
];
