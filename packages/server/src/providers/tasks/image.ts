/**
 * Image generation on each provider's wire: OpenAI's `/images/generations` (dall-e-2, dall-e-3,
 * gpt-image-1 and -mini), Gemini's Imagen (`models/{model}:predict`), and the mock, which draws
 * a real PNG from a hash of the prompt. Every image comes back as bytes (OpenAI is asked for
 * base64, never for a URL that expires within the hour), so the log can store it; the provider's
 * JSON keeps a note in each base64's place.
 */
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import type { MediaItem } from '../../dataplane/pipeline.ts';
import { postJson } from '../http.ts';
import { mockMisbehaviour } from '../mock.ts';
import type { ProviderConnection } from '../registry.ts';
import { ProviderError, withWireRequest } from '../types.ts';
import { bearer, geminiHeaders, openAIPath, unsupported } from './common.ts';

export type ImageQuality = 'standard' | 'hd' | 'low' | 'medium' | 'high' | 'auto';
export type ImageStyle = 'vivid' | 'natural';

export type ImageParams = {
  prompt: string;
  /** `WxH`; absent: the model's default. */
  size?: string;
  quality?: ImageQuality;
  count: number;
  style?: ImageStyle;
  seed?: number;
};

export type GeneratedImage = { mimeType: string; data: Buffer; revisedPrompt?: string };

export type ImageAnswer = {
  images: GeneratedImage[];
  /** The size and quality made, as the provider reported them or as asked: what is priced. */
  size: string;
  quality: string | null;
  /** gpt-image's token usage, where reported. */
  usage: { inputTokens: number; outputTokens: number } | null;
  providerRequest: unknown;
  providerResponse: unknown;
  media: MediaItem[];
};

/** What a model accepts: sizes (the first the default), qualities, images per request. */
export type ImageCapabilities = {
  sizes: string[];
  qualities: ImageQuality[];
  /** The quality priced when none is asked (or `auto`): the dearest the model may pick. */
  defaultQuality: string | null;
  maxCount: number;
  style: boolean;
  seed: boolean;
};

const GPT_IMAGE: ImageCapabilities = {
  sizes: ['1024x1024', '1536x1024', '1024x1536'],
  qualities: ['low', 'medium', 'high', 'auto'],
  defaultQuality: 'high',
  maxCount: 10,
  style: false,
  seed: false,
};

/** Imagen's output sizes, by the aspect ratio it is asked for. */
const IMAGEN_ASPECT: Record<string, string> = {
  '1024x1024': '1:1',
  '896x1280': '3:4',
  '1280x896': '4:3',
  '768x1408': '9:16',
  '1408x768': '16:9',
};

const IMAGEN: ImageCapabilities = {
  sizes: Object.keys(IMAGEN_ASPECT),
  qualities: [],
  defaultQuality: null,
  maxCount: 4,
  style: false,
  seed: false,
};

const MOCK: ImageCapabilities = {
  sizes: ['256x256', '512x512', '1024x1024', '1024x1792', '1792x1024', '1024x1536', '1536x1024'],
  qualities: ['standard', 'hd', 'low', 'medium', 'high', 'auto'],
  defaultQuality: null,
  maxCount: 10,
  style: true,
  seed: true,
};

/** What `provider/model` accepts, or null for a model this gateway cannot make images with. */
export function imageCapabilities(provider: string, model: string): ImageCapabilities | null {
  if (provider === 'mock') return MOCK;
  if (provider === 'openai') {
    if (model.startsWith('dall-e-2')) {
      return {
        sizes: ['1024x1024', '512x512', '256x256'],
        qualities: ['standard'],
        defaultQuality: 'standard',
        maxCount: 10,
        style: false,
        seed: false,
      };
    }
    if (model.startsWith('dall-e-3')) {
      // dall-e-3 makes one image per request: more are asked for in parallel.
      return {
        sizes: ['1024x1024', '1792x1024', '1024x1792'],
        qualities: ['standard', 'hd'],
        defaultQuality: 'standard',
        maxCount: 10,
        style: true,
        seed: false,
      };
    }
    if (model.startsWith('gpt-image')) return GPT_IMAGE;
  }
  if (provider === 'gemini' && model.startsWith('imagen')) return IMAGEN;
  return null;
}

/** The note that stands in the logged JSON for a file stored apart from it. */
export function mediaNote(mimeType: string, bytes: number, index: number): string {
  return `[${mimeType}, ${bytes.toLocaleString('en-US')} bytes, stored as media ${index}]`;
}

function decoded(b64: unknown, what: string): Buffer {
  if (typeof b64 !== 'string' || b64.length === 0) {
    throw new ProviderError('invalid_response', `The provider sent ${what} without its image`);
  }
  return Buffer.from(b64, 'base64');
}

const isOpenAIContentPolicy = (body: unknown) => {
  const code = (body as { error?: { code?: unknown } } | null)?.error?.code;
  return code === 'content_policy_violation' || code === 'moderation_blocked';
};

type OpenAIImages = {
  created?: number;
  data?: { b64_json?: string; url?: string; revised_prompt?: string }[];
  output_format?: string;
  quality?: string;
  size?: string;
  usage?: { input_tokens?: number; output_tokens?: number };
};

async function openAIImages(
  conn: ProviderConnection,
  model: string,
  caps: ImageCapabilities,
  params: ImageParams,
  signal: AbortSignal,
): Promise<ImageAnswer> {
  const gptImage = model.startsWith('gpt-image');
  const dallE3 = model.startsWith('dall-e-3');
  const size = params.size ?? (caps.sizes[0] as string);
  const quality = params.quality === 'auto' && !gptImage ? undefined : params.quality;
  const body = {
    model,
    prompt: params.prompt,
    n: dallE3 ? 1 : params.count,
    size,
    ...(quality !== undefined && { quality }),
    ...(params.style !== undefined && caps.style && { style: params.style }),
    // gpt-image models always answer in base64 and refuse the parameter.
    ...(!gptImage && { response_format: 'b64_json' }),
  };
  const url = openAIPath(conn, '/images/generations');
  const call = () =>
    postJson(url, bearer(conn), body, signal, isOpenAIContentPolicy) as Promise<OpenAIImages>;
  const responses = await withWireRequest(
    () => body,
    Promise.all(Array.from({ length: dallE3 ? params.count : 1 }, call)),
  );
  const first = responses[0] as OpenAIImages;
  const items = responses.flatMap((r) => r.data ?? []);
  if (items.length !== params.count) {
    throw new ProviderError(
      'invalid_response',
      `The provider sent ${items.length} images for ${params.count} asked`,
    );
  }
  const mimeType = `image/${first.output_format === 'jpeg' ? 'jpeg' : (first.output_format ?? 'png')}`;
  const images = items.map((item) => ({
    mimeType,
    data: decoded(item.b64_json, 'an image entry'),
    ...(item.revised_prompt !== undefined && { revisedPrompt: item.revised_prompt }),
  }));
  const inputTokens = responses.reduce((n, r) => n + (r.usage?.input_tokens ?? 0), 0);
  const outputTokens = responses.reduce((n, r) => n + (r.usage?.output_tokens ?? 0), 0);
  return {
    images,
    size: first.size ?? size,
    quality: first.quality ?? (quality === undefined || quality === 'auto' ? caps.defaultQuality : quality),
    usage: first.usage ? { inputTokens, outputTokens } : null,
    providerRequest: body,
    providerResponse: {
      ...first,
      data: images.map((image, i) => ({
        ...items[i],
        b64_json: mediaNote(image.mimeType, image.data.byteLength, i),
      })),
      ...(first.usage && {
        usage: { ...first.usage, input_tokens: inputTokens, output_tokens: outputTokens },
      }),
    },
    media: images.map(({ mimeType, data }) => ({ mimeType, data })),
  };
}

type ImagenAnswer = {
  predictions?: { bytesBase64Encoded?: string; mimeType?: string; raiFilteredReason?: string }[];
};

async function imagenImages(
  conn: ProviderConnection,
  model: string,
  caps: ImageCapabilities,
  params: ImageParams,
  signal: AbortSignal,
): Promise<ImageAnswer> {
  const size = params.size ?? (caps.sizes[0] as string);
  const body = {
    instances: [{ prompt: params.prompt }],
    parameters: { sampleCount: params.count, aspectRatio: IMAGEN_ASPECT[size] ?? '1:1' },
  };
  const url = `${conn.baseUrl}/v1beta/models/${encodeURIComponent(model)}:predict`;
  const response = (await withWireRequest(
    () => body,
    postJson(url, geminiHeaders(conn), body, signal),
  )) as ImagenAnswer;
  const predictions = (response.predictions ?? []).filter((p) => p.bytesBase64Encoded);
  if (predictions.length === 0) {
    const filtered = response.predictions?.find((p) => p.raiFilteredReason)?.raiFilteredReason;
    if (filtered || response.predictions === undefined) {
      // Imagen answers an empty list when its safety filter removed every image.
      throw new ProviderError(
        'content_policy',
        filtered ?? 'The provider made no image (filtered)',
        null,
        response,
      );
    }
  }
  const images = predictions.map((p) => ({
    mimeType: p.mimeType ?? 'image/png',
    data: decoded(p.bytesBase64Encoded, 'a prediction'),
  }));
  return {
    images,
    size,
    quality: null,
    usage: null,
    providerRequest: body,
    providerResponse: {
      ...response,
      predictions: (response.predictions ?? []).map((p) => {
        const i = predictions.indexOf(p);
        const image = images[i];
        return image ? { ...p, bytesBase64Encoded: mediaNote(image.mimeType, image.data.byteLength, i) } : p;
      }),
    },
    media: images.map(({ mimeType, data }) => ({ mimeType, data })),
  };
}

// --- The mock's PNG ----------------------------------------------------------------------------

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (const byte of data) c = (CRC_TABLE[(c ^ byte) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * A valid PNG (8-bit RGB) drawn from `seed`: two colours and a pattern of rings and stripes taken
 * from its SHA-256, so the same prompt always draws the same picture and another prompt another.
 */
export function mockPng(seed: string, width: number, height: number): Buffer {
  const h = createHash('sha256').update(seed).digest();
  const [r1, g1, b1, r2, g2, b2] = h;
  const cx = ((h[6] as number) / 255) * width;
  const cy = ((h[7] as number) / 255) * height;
  const ring = 8 + ((h[8] as number) % 40);
  const stripe = 6 + ((h[9] as number) % 30);
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    rows[row] = 0; // filter: none
    for (let x = 0; x < width; x++) {
      const d = Math.hypot(x - cx, y - cy);
      const on = (Math.floor(d / ring) + Math.floor((x + y) / stripe)) % 2 === 0;
      const shade = 0.6 + 0.4 * (1 - y / height);
      const o = row + 1 + x * 3;
      rows[o] = Math.round((on ? (r1 as number) : (r2 as number)) * shade);
      rows[o + 1] = Math.round((on ? (g1 as number) : (g2 as number)) * shade);
      rows[o + 2] = Math.round((on ? (b1 as number) : (b2 as number)) * shade);
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, adaptive filtering, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

async function mockImages(
  conn: ProviderConnection,
  model: string,
  caps: ImageCapabilities,
  params: ImageParams,
  signal: AbortSignal,
): Promise<ImageAnswer> {
  const request = { model, ...params };
  return withWireRequest(
    () => request,
    (async () => {
      await mockMisbehaviour(params.prompt, model, { latencyMs: conn.mockLatencyMs, signal });
      const size = params.size ?? (caps.sizes[0] as string);
      const [width, height] = size.split('x').map(Number) as [number, number];
      const images = Array.from({ length: params.count }, (_, i) => ({
        mimeType: 'image/png',
        data: mockPng(`${params.prompt}\n${params.seed ?? ''}\n${i}`, width, height),
        revisedPrompt: `A picture of: ${params.prompt}`,
      }));
      return {
        images,
        size,
        quality: params.quality ?? null,
        usage: null,
        providerRequest: request,
        providerResponse: {
          created: Math.floor(Date.now() / 1000),
          model: `mock/${model}`,
          data: images.map((image, i) => ({
            b64_json: mediaNote(image.mimeType, image.data.byteLength, i),
            revised_prompt: image.revisedPrompt,
          })),
        },
        media: images.map(({ mimeType, data }) => ({ mimeType, data })),
      };
    })(),
  );
}

export function generateImages(
  conn: ProviderConnection,
  model: string,
  params: ImageParams,
  signal: AbortSignal,
): Promise<ImageAnswer> {
  const caps = imageCapabilities(conn.descriptor.id, model);
  if (!caps) return Promise.reject(unsupported(conn, `images with ${model}`));
  if (params.size !== undefined && !caps.sizes.includes(params.size)) {
    return Promise.reject(unsupported(conn, `${params.size} images with ${model}`));
  }
  if (params.count > caps.maxCount) {
    return Promise.reject(unsupported(conn, `${params.count} images at once with ${model}`));
  }
  switch (conn.descriptor.wire.format) {
    case 'openai':
      return openAIImages(conn, model, caps, params, signal);
    case 'gemini':
      return imagenImages(conn, model, caps, params, signal);
    case 'mock':
      return mockImages(conn, model, caps, params, signal);
    default:
      return Promise.reject(unsupported(conn, 'images'));
  }
}
