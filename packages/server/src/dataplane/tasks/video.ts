/**
 * Video through a gate: `data {prompt, duration?, size?, image?}` → `videos[]`. Priced per second
 * of video (the catalog's unitPrices.perSecond); a block gate reserves, for each model it may
 * try, the seconds that model would make (the requested duration, else its default, which is
 * always sent, so it cannot make more) at its price, and takes the dearest.
 */
import { z } from 'zod';
import { findModel } from '../../domain/catalog.ts';
import { ValidationError } from '../../domain/errors.ts';
import type { Gate } from '../../generated/prisma/client.ts';
import {
  generateVideo,
  secondsFor,
  VIDEO_SIZES,
  type VideoAnswer,
  type VideoParams,
  videoProblem,
} from '../../providers/tasks/video.ts';
import { connectionFor, mergeModel, type TaskKind, type TaskRequestBase } from '../pipeline.ts';
import { countOf } from '../usage.ts';
import { envelopeFields, nativeEnvelope } from './common.ts';

export const MAX_VIDEO_PROMPT = 10_000;
/** A reference image as a data URL: 10 MB of base64 at most. */
const MAX_IMAGE_CHARS = 14_000_000;

const image = z
  .string()
  .max(MAX_IMAGE_CHARS, 'must be at most 10 MB')
  .refine(
    (v) => /^data:image\/[\w.+-]+;base64,[A-Za-z0-9+/]+={0,2}$/.test(v) || /^https:\/\/[^\s]+$/.test(v),
    'must be a data URL of an image (data:image/png;base64,...) or an https:// URL',
  )
  .refine((v) => !v.startsWith('https://') || URL.canParse(v), 'must be a valid https:// URL');

export const videoData = z.strictObject({
  prompt: z.string().trim().min(1, 'must not be empty').max(MAX_VIDEO_PROMPT),
  duration: z.number().int('must be whole seconds').min(1).max(20).optional(),
  size: z.enum(VIDEO_SIZES, { error: `must be one of ${VIDEO_SIZES.join(', ')}` }).optional(),
  image: image.optional(),
});

export const nativeVideoSchema = nativeEnvelope(videoData);

export type VideoRequest = TaskRequestBase & {
  prompt: string;
  duration?: number;
  size?: string;
  image?: string;
};

export function videoRequest(
  data: z.infer<typeof videoData>,
  envelope: Omit<z.infer<typeof nativeVideoSchema>, 'data' | 'gateId'>,
): VideoRequest {
  return {
    prompt: data.prompt,
    ...(data.duration !== undefined && { duration: data.duration }),
    ...(data.size !== undefined && { size: data.size }),
    ...(data.image !== undefined && { image: data.image }),
    ...envelopeFields(envelope),
  };
}

const perSecond = (modelId: string) => findModel(modelId)?.unitPrices.perSecond ?? 0;
const providerModelOf = (modelId: string) => findModel(modelId)?.providerModel ?? modelId.split('/')[1] ?? '';

export const videoKind: TaskKind<VideoRequest, VideoParams, VideoAnswer> = {
  taskType: 'video',
  noun: 'video',
  merge(gate: Gate, request: VideoRequest) {
    const { model, ignoredOverrides } = mergeModel(gate, request);
    const params: VideoParams = {
      prompt: request.prompt,
      ...(request.duration !== undefined && { seconds: request.duration }),
      ...(request.size !== undefined && { size: request.size }),
      ...(request.image !== undefined && { image: request.image }),
    };
    // The first model must be able to make the clip: the client hears why as a 400. A fallback
    // that cannot is skipped when its turn comes.
    const problem = videoProblem(providerModelOf(model), params);
    if (problem) throw new ValidationError([problem]);
    return { model, params, ignoredOverrides };
  },
  worstCase(models, params) {
    let dearest = 0;
    for (const id of models) {
      dearest = Math.max(dearest, secondsFor(providerModelOf(id), params) * perSecond(id));
    }
    return dearest;
  },
  attempt: (a) => generateVideo(connectionFor(a), a.model.providerModel, a.params, a.timing.signal),
  price(model, modelId, params, answer) {
    // Never more than was asked for: the reservation assumed as much.
    const seconds = Math.min(
      countOf('seconds made', 'seconds', answer.seconds),
      secondsFor(model.providerModel, params),
    );
    return {
      usage: { promptTokens: 0, completionTokens: 0 },
      tokensEstimated: false,
      costUsd: seconds * perSecond(modelId),
      billed: { quantity: seconds, unit: 'seconds' },
    };
  },
};
