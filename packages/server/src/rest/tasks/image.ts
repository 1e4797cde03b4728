/** Image generation over HTTP: POST /v3/image and OpenAI's POST /v1/images/generations. */
import { z } from 'zod';
import type { TaskOutcome } from '../../dataplane/pipeline.ts';
import { metadata, params } from '../../dataplane/request.ts';
import {
  type ImageRequest,
  imageData,
  imageKind,
  imageQuality,
  imageRequest,
  imageSize,
  MAX_IMAGE_PROMPT,
  MAX_IMAGES,
  nativeImageSchema,
} from '../../dataplane/tasks/image.ts';
import { parseWith } from '../../domain/errors.ts';
import type { ImageAnswer } from '../../providers/tasks/image.ts';
import type { NativeTask, OpenAITask } from './routes.ts';

/**
 * An image as a URL: a `data:` URL of its bytes. The provider's own URLs expire within the hour
 * and the gateway asks for the bytes instead (to store them with the log entry); a data URL opens
 * in a browser and in fetch() alike.
 */
const dataUrl = (image: ImageAnswer['images'][number]) =>
  `data:${image.mimeType};base64,${image.data.toString('base64')}`;

// The native body takes `responseFormat` beside the image's own fields.
const nativeSchema = nativeImageSchema.extend({
  data: imageData.extend({ responseFormat: z.enum(['base64', 'url']).optional() }),
});

export const nativeImage: NativeTask<ImageRequest, ImageAnswer> = {
  path: 'image',
  kind: imageKind,
  doc: {
    summary: 'Generate images through a gate',
    body: nativeSchema,
    ok: { description: '`images` (base64 or a data: URL each), `size`, `quality`, `usage`' },
  },
  parse(body) {
    const {
      data: { responseFormat: _format, ...data },
      gateId: _gateId,
      ...envelope
    } = parseWith(nativeSchema, body);
    return imageRequest(data, envelope);
  },
  answer(o: TaskOutcome<ImageAnswer>, body) {
    const url = (body as { data?: { responseFormat?: unknown } }).data?.responseFormat === 'url';
    return {
      images: o.answer.images.map((image) => ({
        ...(url ? { url: dataUrl(image) } : { base64: image.data.toString('base64') }),
        mimeType: image.mimeType,
        ...(image.revisedPrompt !== undefined && { revisedPrompt: image.revisedPrompt }),
      })),
      size: o.answer.size,
      ...(o.answer.quality !== null && { quality: o.answer.quality }),
      usage: {
        images: o.answer.images.length,
        ...(o.answer.usage && {
          inputTokens: o.answer.usage.inputTokens,
          outputTokens: o.answer.usage.outputTokens,
        }),
      },
    };
  },
};

const openAIImageSchema = z.object({
  model: params.model.optional(),
  prompt: z
    .string()
    .min(1, 'must not be empty')
    .max(MAX_IMAGE_PROMPT, `at most ${MAX_IMAGE_PROMPT.toLocaleString('en-US')} characters`),
  n: z.number().int().min(1).max(MAX_IMAGES).nullish(),
  size: z.union([imageSize, z.literal('auto')]).nullish(),
  quality: imageQuality.nullish(),
  style: z.enum(['vivid', 'natural']).nullish(),
  response_format: z.enum(['b64_json', 'url']).nullish(),
  user: z.string().optional(),
  gateId: z.uuid().optional(),
  metadata: metadata.optional(),
});

export const openAIImage: OpenAITask<ImageRequest, ImageAnswer> = {
  path: 'images/generations',
  kind: imageKind,
  doc: {
    summary: "Image generations, in OpenAI's wire format",
    body: openAIImageSchema.loose(),
    ok: { description: 'The images, as OpenAI answers (`b64_json`, or a data: URL as `url`)' },
  },
  parse(body, modelIsGate) {
    const b = parseWith(openAIImageSchema, body);
    return imageRequest(
      imageData.parse({
        prompt: b.prompt,
        ...(b.n != null && { count: b.n }),
        ...(b.size != null && b.size !== 'auto' && { size: b.size }),
        ...(b.quality != null && { quality: b.quality }),
        ...(b.style != null && { style: b.style }),
      }),
      {
        ...(!modelIsGate && b.model !== undefined && { model: b.model }),
        ...(b.metadata && { metadata: b.metadata }),
      },
    );
  },
  answer(o, body) {
    // gpt-image models answer in base64 only, as OpenAI's own endpoint does.
    const url =
      (body as { response_format?: unknown }).response_format === 'url' && !/gpt-image/.test(o.modelUsed);
    const usage = (o.answer.providerResponse as { usage?: unknown } | null)?.usage;
    return {
      created: Math.floor(Date.now() / 1000),
      data: o.answer.images.map((image) => ({
        ...(url ? { url: dataUrl(image) } : { b64_json: image.data.toString('base64') }),
        ...(image.revisedPrompt !== undefined && { revised_prompt: image.revisedPrompt }),
      })),
      ...(usage !== undefined && { usage }),
    };
  },
};
