/**
 * Image generation through a gate: `prompt` → `count` images. Priced per image by size and
 * quality (the catalog's unitPrices.perImage); a block gate reserves `count` times the dearest
 * price among the models tried for that size and quality (all qualities where none is asked).
 */
import { z } from 'zod';
import { type CatalogModel, findModel } from '../../domain/catalog.ts';
import { ValidationError } from '../../domain/errors.ts';
import type { Gate } from '../../generated/prisma/client.ts';
import {
  generateImages,
  type ImageAnswer,
  type ImageCapabilities,
  type ImageParams,
  imageCapabilities,
} from '../../providers/tasks/image.ts';
import { connectionFor, mergeModel, type TaskKind, type TaskRequestBase } from '../pipeline.ts';
import { envelopeFields, nativeEnvelope } from './common.ts';

export const MAX_IMAGE_PROMPT = 32_000;
export const MAX_IMAGES = 10;

export const imageSize = z.string().regex(/^\d{2,4}x\d{2,4}$/, 'must be WIDTHxHEIGHT, such as 1024x1024');
export const imageQuality = z.enum(['standard', 'hd', 'low', 'medium', 'high', 'auto']);

export const imageData = z.strictObject({
  prompt: z
    .string()
    .min(1, 'must not be empty')
    .max(MAX_IMAGE_PROMPT, `at most ${MAX_IMAGE_PROMPT.toLocaleString('en-US')} characters`),
  size: imageSize.optional(),
  quality: imageQuality.optional(),
  count: z.number().int().min(1).max(MAX_IMAGES).optional(),
  style: z.enum(['vivid', 'natural']).optional(),
  seed: z
    .number()
    .int()
    .min(0)
    .max(2 ** 32 - 1)
    .optional(),
});

export const nativeImageSchema = nativeEnvelope(imageData);

export type ImageRequest = TaskRequestBase & Omit<ImageParams, 'count'> & { count: number };

export function imageRequest(
  data: z.infer<typeof imageData>,
  envelope: Omit<z.infer<typeof nativeImageSchema>, 'data' | 'gateId'>,
): ImageRequest {
  return {
    prompt: data.prompt,
    count: data.count ?? 1,
    ...(data.size !== undefined && { size: data.size }),
    ...(data.quality !== undefined && { quality: data.quality }),
    ...(data.style !== undefined && { style: data.style }),
    ...(data.seed !== undefined && { seed: data.seed }),
    ...envelopeFields(envelope),
  };
}

const capabilitiesOf = (model: CatalogModel | undefined): ImageCapabilities | null =>
  model ? imageCapabilities(model.provider, model.providerModel) : null;

/** The price of one image of `size` and `quality`: the first of `size/quality`, `size`, `default`. */
export function imagePrice(model: CatalogModel, size: string, quality: string | null): number {
  const prices = model.unitPrices.perImage ?? {};
  return (quality !== null ? prices[`${size}/${quality}`] : undefined) ?? prices[size] ?? prices.default ?? 0;
}

/** The most one image of `model` may cost for what is asked (any quality where none is fixed). */
function dearestImage(id: string, params: ImageParams): number {
  const model = findModel(id);
  if (!model) return 0;
  const caps = capabilitiesOf(model);
  const size = params.size ?? caps?.sizes[0] ?? 'default';
  const prices = model.unitPrices.perImage ?? {};
  const fixed = params.quality !== undefined && params.quality !== 'auto';
  let dearest = imagePrice(model, size, fixed ? (params.quality as string) : null);
  if (!fixed) {
    for (const [key, price] of Object.entries(prices)) {
      if (key.startsWith(`${size}/`)) dearest = Math.max(dearest, price);
    }
  }
  return dearest;
}

/** The request checked against what the model it goes to first accepts: a 400 naming the field. */
function checkAgainst(modelId: string, params: ImageParams) {
  const caps = capabilitiesOf(findModel(modelId));
  if (!caps) return;
  const issues: { path: string; message: string }[] = [];
  if (params.size !== undefined && !caps.sizes.includes(params.size)) {
    issues.push({ path: 'data.size', message: `${modelId} makes ${caps.sizes.join(', ')}` });
  }
  if (params.quality !== undefined && !caps.qualities.includes(params.quality)) {
    issues.push({
      path: 'data.quality',
      message:
        caps.qualities.length > 0
          ? `${modelId} takes ${caps.qualities.join(', ')}`
          : `${modelId} takes no quality`,
    });
  }
  if (params.count > caps.maxCount) {
    issues.push({ path: 'data.count', message: `${modelId} makes at most ${caps.maxCount} at once` });
  }
  if (issues.length > 0) throw new ValidationError(issues);
}

export const imageKind: TaskKind<ImageRequest, ImageParams, ImageAnswer> = {
  taskType: 'image',
  noun: 'image',
  merge(gate: Gate, request: ImageRequest) {
    const { model, ignoredOverrides } = mergeModel(gate, request);
    const params: ImageParams = {
      prompt: request.prompt,
      count: request.count,
      ...(request.size !== undefined && { size: request.size }),
      ...(request.quality !== undefined && { quality: request.quality }),
      ...(request.style !== undefined && { style: request.style }),
      ...(request.seed !== undefined && { seed: request.seed }),
    };
    checkAgainst(model, params);
    return { model, params, ignoredOverrides };
  },
  worstCase(models, params) {
    let dearest = 0;
    for (const id of models) dearest = Math.max(dearest, dearestImage(id, params));
    return params.count * dearest;
  },
  attempt: (a) => generateImages(connectionFor(a), a.model.providerModel, a.params, a.timing.signal),
  price(model, _modelId, _params, answer) {
    const each = imagePrice(model, answer.size, answer.quality);
    const usage = {
      promptTokens: answer.usage?.inputTokens ?? 0,
      completionTokens: answer.usage?.outputTokens ?? 0,
    };
    // An image model that reports tokens (gpt-image) is still priced per image here.
    const billed = { quantity: answer.images.length, unit: 'images' as const };
    return { usage, tokensEstimated: false, costUsd: answer.images.length * each, billed };
  },
};
