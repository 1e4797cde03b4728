/** Every task type's routes, native and OpenAI-compatible: a new type adds its two here. */
import { nativeEmbeddings, openAIEmbeddings } from './embeddings.ts';
import { nativeImage, openAIImage } from './image.ts';
import { nativeModeration, openAIModeration } from './moderation.ts';
import { nativeOcr } from './ocr.ts';
import type { AnyNativeTask, AnyOpenAITask } from './routes.ts';
import { nativeSpeech, openAISpeech } from './speech.ts';
import {
  nativeTranscription,
  nativeTranslation,
  openAITranscription,
  openAITranslation,
} from './transcription.ts';

export const NATIVE_TASKS: AnyNativeTask[] = [
  nativeEmbeddings,
  nativeModeration,
  nativeSpeech,
  nativeTranscription,
  nativeTranslation,
  nativeImage,
  nativeOcr,
];

export const OPENAI_TASKS: AnyOpenAITask[] = [
  openAIEmbeddings,
  openAIModeration,
  openAISpeech,
  openAITranscription,
  openAITranslation,
  openAIImage,
];
