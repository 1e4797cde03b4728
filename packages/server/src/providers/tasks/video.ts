/**
 * Video generation on each provider's wire. Every provider makes video asynchronously: the
 * attempt creates the job, polls it until it ends, and downloads the file, so one attempt holds
 * the whole generation (the pipeline gives video attempts their own deadline).
 *
 * - OpenAI Sora: `POST /videos` (JSON; a reference image as `input_reference.image_url`, a data
 *   URL or an https URL, which the API takes beside the multipart upload), `GET /videos/{id}`
 *   until `status` is completed or failed, `GET /videos/{id}/content` for the MP4.
 * - Gemini Veo: `POST /v1beta/models/{model}:predictLongRunning` → an operation `{name}`,
 *   `GET /v1beta/{name}` until `done`, the file at
 *   `response.generateVideoResponse.generatedSamples[0].video.uri`, downloaded with the key.
 * - The mock: an animated GIF (see mockGif), after `[mock:delay=MS]` or at once.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { postJson, providerErrorMessage } from '../http.ts';
import { mockMisbehaviour } from '../mock.ts';
import type { ProviderConnection } from '../registry.ts';
import { ProviderError, withWireRequest } from '../types.ts';
import { bearer, geminiHeaders, openAIPath, unsupported } from './common.ts';

export type VideoParams = {
  prompt: string;
  /** The clip's length; unset, the model's default, which is sent (see secondsFor). */
  seconds?: number;
  /** `WIDTHxHEIGHT`, where the client asked for one. */
  size?: string;
  /** A reference image: a data URL of an image type, or an https URL. */
  image?: string;
};

export type VideoFile = { mimeType: string; data: Buffer };

export type VideoAnswer = {
  videos: VideoFile[];
  /** The seconds produced (the provider's report, else what was asked): what is billed. */
  seconds: number;
  providerRequest: unknown;
  providerResponse: unknown;
  media: VideoFile[];
};

/** What each model can make: its durations (the first is its default) and sizes. */
export type VideoModelSpec = { seconds: readonly number[]; sizes: readonly string[] };

const SORA_SIZES = ['720x1280', '1280x720'] as const;
const SORA_PRO_SIZES = [...SORA_SIZES, '1024x1792', '1792x1024'] as const;
/** Veo takes an aspect ratio: the sizes it maps to (720p). */
const VEO_ASPECT: Record<string, string> = { '1280x720': '16:9', '720x1280': '9:16' };
const VEO_SIZES = Object.keys(VEO_ASPECT);
/** The mock: 1 to 20 seconds, 4 by default. */
const MOCK_SECONDS = [4, 1, 2, 3, ...Array.from({ length: 16 }, (_, i) => i + 5)];
export const VIDEO_SIZES = [...SORA_PRO_SIZES] as const;

export const VIDEO_MODELS: Record<string, VideoModelSpec> = {
  'sora-2': { seconds: [4, 8, 12], sizes: SORA_SIZES },
  'sora-2-pro': { seconds: [4, 8, 12], sizes: SORA_PRO_SIZES },
  'veo-2.0-generate-001': { seconds: [8, 5, 6, 7], sizes: VEO_SIZES },
  'veo-3.0-generate-001': { seconds: [8, 4, 6], sizes: VEO_SIZES },
  'veo-3.0-fast-generate-001': { seconds: [8, 4, 6], sizes: VEO_SIZES },
  video: { seconds: MOCK_SECONDS, sizes: VIDEO_SIZES },
};

/** The model's spec; a model the table lacks takes any duration up to 12 s and any size. */
export function videoSpec(providerModel: string): VideoModelSpec {
  return VIDEO_MODELS[providerModel] ?? { seconds: [8, 4, 5, 6, 7, 12], sizes: VIDEO_SIZES };
}

/** The seconds sent to the model: the client's, else the model's default. Always sent, so billed seconds are known. */
export const secondsFor = (providerModel: string, params: { seconds?: number | undefined }) =>
  params.seconds ?? (videoSpec(providerModel).seconds[0] as number);

/** Why the model cannot make this clip, naming the request's field; null when it can. */
export function videoProblem(
  providerModel: string,
  p: { seconds?: number | undefined; size?: string | undefined },
) {
  const spec = videoSpec(providerModel);
  if (p.seconds !== undefined && !spec.seconds.includes(p.seconds)) {
    const allowed = [...spec.seconds].sort((a, b) => a - b).join(', ');
    return { path: 'data.duration', message: `${providerModel} makes clips of ${allowed} seconds` };
  }
  if (p.size !== undefined && !spec.sizes.includes(p.size)) {
    return { path: 'data.size', message: `${providerModel} makes ${spec.sizes.join(', ')}` };
  }
  return null;
}

/** Polls start quickly and slow down to every 10 s: a job takes minutes, a test milliseconds. */
async function pollUntil<T>(poll: () => Promise<T>, done: (v: T) => boolean, signal: AbortSignal) {
  let wait = 250;
  for (;;) {
    const value = await poll();
    if (done(value)) return value;
    try {
      await sleep(wait, undefined, { signal });
    } catch {
      throw abortedError(signal);
    }
    wait = Math.min(wait * 2, 10_000);
  }
}

function abortedError(signal: AbortSignal): ProviderError {
  const reason = signal.reason as { name?: string } | undefined;
  return reason?.name === 'TimeoutError'
    ? new ProviderError('timeout', 'The provider did not finish the video in time')
    : new ProviderError('network', 'The request was cancelled');
}

/** A GET to the provider: its status, content type and bytes; redirects followed (without the key elsewhere). */
async function get(
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<{ status: number; contentType: string | null; data: Buffer }> {
  let target = url;
  for (let hop = 0; hop < 5; hop++) {
    let res: Awaited<ReturnType<typeof request>>;
    try {
      const sameOrigin = new URL(target).origin === new URL(url).origin;
      res = await request(target, { method: 'GET', headers: sameOrigin ? headers : {}, signal });
    } catch (error) {
      if (signal.aborted) throw abortedError(signal);
      console.error(`provider: GET ${new URL(url).origin} failed: ${(error as Error).message}`);
      throw new ProviderError('network', 'Could not reach the provider (network error)');
    }
    const location = res.headers.location;
    if (res.statusCode >= 300 && res.statusCode < 400 && typeof location === 'string') {
      await res.body.dump();
      target = new URL(location, target).toString();
      continue;
    }
    let data: Buffer;
    try {
      data = Buffer.from(await res.body.arrayBuffer());
    } catch {
      throw signal.aborted ? abortedError(signal) : new ProviderError('network', 'The download was cut off');
    }
    const type = res.headers['content-type'];
    return { status: res.statusCode, contentType: typeof type === 'string' ? type : null, data };
  }
  throw new ProviderError('invalid_response', 'The provider redirected the download too many times');
}

async function getJson(url: string, headers: Record<string, string>, signal: AbortSignal) {
  const res = await get(url, headers, signal);
  let body: unknown = null;
  try {
    body = JSON.parse(res.data.toString('utf8'));
  } catch {
    if (res.status < 300) throw new ProviderError('invalid_response', 'The provider answered with no JSON');
  }
  if (res.status >= 300) {
    const message = providerErrorMessage(body, `HTTP ${res.status}`);
    throw new ProviderError('http', `Provider answered ${res.status}: ${message}`, res.status, body);
  }
  return body;
}

async function download(url: string, headers: Record<string, string>, signal: AbortSignal) {
  const res = await get(url, headers, signal);
  if (res.status >= 300) {
    throw new ProviderError('http', `Provider answered ${res.status} to the download`, res.status, null);
  }
  if (res.data.length === 0) throw new ProviderError('invalid_response', 'The provider sent an empty video');
  return res;
}

/** The note a file leaves in the log in its place. */
const note = (mimeType: string, bytes: number) => `[${mimeType}, ${bytes} bytes]`;

/** The image as the log keeps it: a data URL becomes a note, an https URL stays. */
const loggedImage = (image: string) =>
  image.startsWith('data:') ? note(image.slice(5, image.indexOf(';')), image.length) : image;

function dataUrlParts(image: string): { mimeType: string; base64: string } | null {
  const match = /^data:(image\/[\w.+-]+);base64,(.*)$/s.exec(image);
  return match ? { mimeType: match[1] as string, base64: match[2] as string } : null;
}

type SoraVideo = {
  id?: string;
  status?: 'queued' | 'in_progress' | 'completed' | 'failed';
  seconds?: string;
  error?: { code?: string; message?: string } | null;
};

async function soraVideo(
  conn: ProviderConnection,
  model: string,
  params: VideoParams,
  signal: AbortSignal,
): Promise<VideoAnswer> {
  const body = {
    model,
    prompt: params.prompt,
    seconds: String(secondsFor(model, params)),
    ...(params.size !== undefined && { size: params.size }),
    ...(params.image !== undefined && { input_reference: { image_url: params.image } }),
  };
  const logged = {
    ...body,
    ...(params.image !== undefined && { input_reference: { image_url: loggedImage(params.image) } }),
  };
  const headers = bearer(conn);
  return withWireRequest(
    () => logged,
    (async () => {
      const created = (await postJson(openAIPath(conn, '/videos'), headers, body, signal)) as SoraVideo;
      if (typeof created.id !== 'string') {
        throw new ProviderError('invalid_response', 'The provider answered without a video id');
      }
      const url = openAIPath(conn, `/videos/${encodeURIComponent(created.id)}`);
      const final = (await pollUntil(
        async () => (await getJson(url, headers, signal)) as SoraVideo,
        (v) => v.status === 'completed' || v.status === 'failed',
        signal,
      )) as SoraVideo;
      if (final.status === 'failed') {
        const message = final.error?.message ?? 'the video failed';
        const refused = /moderation|policy|safety/i.test(`${final.error?.code} ${message}`);
        const failure = refused
          ? new ProviderError('content_policy', message, null, final)
          : new ProviderError('http', `The provider failed the video: ${message}`, 500, final);
        failure.providerRequest = logged;
        throw failure;
      }
      const file = await download(`${url}/content`, headers, signal);
      const video = { mimeType: file.contentType?.split(';')[0] || 'video/mp4', data: file.data };
      const seconds = Number(final.seconds) || secondsFor(model, params);
      return {
        videos: [video],
        media: [video],
        seconds,
        providerRequest: logged,
        providerResponse: { ...final, content: note(video.mimeType, video.data.length) },
      };
    })(),
  );
}

type VeoOperation = {
  name?: string;
  done?: boolean;
  error?: { code?: number; message?: string };
  response?: {
    generateVideoResponse?: {
      generatedSamples?: { video?: { uri?: string } }[];
      raiMediaFilteredCount?: number;
      raiMediaFilteredReasons?: string[];
    };
  };
};

async function veoVideo(
  conn: ProviderConnection,
  model: string,
  params: VideoParams,
  signal: AbortSignal,
): Promise<VideoAnswer> {
  let image: { bytesBase64Encoded: string; mimeType: string } | undefined;
  if (params.image !== undefined) {
    const parts = dataUrlParts(params.image);
    // Veo takes an image inline or from Cloud Storage, not from a web address: another model may.
    if (!parts) throw unsupported(conn, 'a reference image by URL (send it as a data URL)');
    image = { bytesBase64Encoded: parts.base64, mimeType: parts.mimeType };
  }
  const aspectRatio = params.size === undefined ? undefined : VEO_ASPECT[params.size];
  if (params.size !== undefined && !aspectRatio) throw unsupported(conn, `videos of ${params.size}`);
  const body = {
    instances: [{ prompt: params.prompt, ...(image && { image }) }],
    parameters: { durationSeconds: secondsFor(model, params), ...(aspectRatio && { aspectRatio }) },
  };
  const logged = image
    ? {
        ...body,
        instances: [
          {
            prompt: params.prompt,
            image: { ...image, bytesBase64Encoded: note(image.mimeType, image.bytesBase64Encoded.length) },
          },
        ],
      }
    : body;
  const headers = geminiHeaders(conn);
  return withWireRequest(
    () => logged,
    (async () => {
      const url = `${conn.baseUrl}/v1beta/models/${encodeURIComponent(model)}:predictLongRunning`;
      const started = (await postJson(url, headers, body, signal)) as VeoOperation;
      if (typeof started.name !== 'string' || !/^[\w./-]+$/.test(started.name)) {
        throw new ProviderError('invalid_response', 'The provider answered without an operation name');
      }
      const opUrl = `${conn.baseUrl}/v1beta/${started.name}`;
      const final = (await pollUntil(
        async () => (await getJson(opUrl, headers, signal)) as VeoOperation,
        (op) => op.done === true,
        signal,
      )) as VeoOperation;
      const fail = (failure: ProviderError) => {
        failure.providerRequest = logged;
        return failure;
      };
      if (final.error) {
        const message = final.error.message ?? 'the video failed';
        throw fail(new ProviderError('http', `The provider failed the video: ${message}`, 500, final));
      }
      const answer = final.response?.generateVideoResponse;
      const uri = answer?.generatedSamples?.[0]?.video?.uri;
      if (!uri) {
        if (answer?.raiMediaFilteredCount) {
          const reasons = answer.raiMediaFilteredReasons?.join('; ') || 'filtered';
          throw fail(new ProviderError('content_policy', reasons, null, final));
        }
        throw fail(
          new ProviderError('invalid_response', 'The provider finished without a video', null, final),
        );
      }
      const file = await download(uri, headers, signal);
      const video = { mimeType: file.contentType?.split(';')[0] || 'video/mp4', data: file.data };
      return {
        videos: [video],
        media: [video],
        seconds: body.parameters.durationSeconds,
        providerRequest: logged,
        providerResponse: { ...final, content: note(video.mimeType, video.data.length) },
      };
    })(),
  );
}

// ---------------------------------------------------------------------------------------------
// The mock's video: an animated GIF, written here with no dependency
// ---------------------------------------------------------------------------------------------

/** GIF's variable-width LZW, as its decoders read it (code size grows up to 12 bits, then a clear). */
function lzw(pixels: Uint8Array, minCodeSize: number): Buffer {
  const out: number[] = [];
  let bits = 0;
  let used = 0;
  const emit = (code: number, size: number) => {
    bits |= code << used;
    used += size;
    while (used >= 8) {
      out.push(bits & 0xff);
      bits >>>= 8;
      used -= 8;
    }
  };
  const clear = 1 << minCodeSize;
  const end = clear + 1;
  let codeSize = minCodeSize + 1;
  let next = end + 1;
  let table = new Map<number, number>();
  emit(clear, codeSize);
  let prefix = pixels[0] ?? 0;
  for (let i = 1; i < pixels.length; i++) {
    const k = pixels[i] as number;
    const key = prefix * 256 + k;
    const known = table.get(key);
    if (known !== undefined) {
      prefix = known;
      continue;
    }
    emit(prefix, codeSize);
    if (next === 4096) {
      emit(clear, codeSize);
      codeSize = minCodeSize + 1;
      next = end + 1;
      table = new Map();
    } else {
      if (next >= 1 << codeSize) codeSize++;
      table.set(key, next++);
    }
    prefix = k;
  }
  emit(prefix, codeSize);
  emit(end, codeSize);
  if (used > 0) out.push(bits & 0xff);
  return Buffer.from(out);
}

const u16 = (n: number) => [n & 0xff, (n >> 8) & 0xff];

/** Bytes in GIF's data sub-blocks: up to 255 each, then a zero-length terminator. */
function subBlocks(data: Buffer): number[] {
  const out: number[] = [];
  for (let i = 0; i < data.length; i += 255) {
    const chunk = data.subarray(i, i + 255);
    out.push(chunk.length, ...chunk);
  }
  out.push(0);
  return out;
}

export const MOCK_FPS = 4;

/**
 * A looping animated GIF of `seconds` × 4 frames at 1/20 of `size` (64×36 for 1280x720): a bar
 * crossing a background, four colours taken from a hash of the prompt, so the same prompt makes
 * the same file. GIF because it is the smallest real moving-picture file that needs no codec:
 * MP4 or WebM would need a video encoder (H.264, VP8) the gateway does not have.
 */
export function mockGif(prompt: string, seconds: number, size = '1280x720'): Buffer {
  const [w = 1280, h = 720] = size.split('x').map(Number);
  const width = Math.max(8, Math.round(w / 20));
  const height = Math.max(8, Math.round(h / 20));
  const hash = createHash('sha256').update(prompt).digest();
  const palette = [...hash.subarray(0, 12)];
  const frames = Math.max(1, seconds * MOCK_FPS);
  const bar = Math.max(2, Math.round(width / 8));
  const out: number[] = [
    ...Buffer.from('GIF89a'),
    ...u16(width),
    ...u16(height),
    0xf1, // a global colour table of 4 entries, 8 bits per primary
    0,
    0,
    ...palette,
    // NETSCAPE2.0: loop forever.
    0x21,
    0xff,
    0x0b,
    ...Buffer.from('NETSCAPE2.0'),
    0x03,
    0x01,
    0x00,
    0x00,
    0x00,
  ];
  const pixels = new Uint8Array(width * height);
  for (let f = 0; f < frames; f++) {
    const x0 = Math.floor((f / frames) * width);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const inBar = x >= x0 && x < x0 + bar;
        pixels[y * width + x] = inBar ? 1 + (f % 3) : 0;
      }
    }
    out.push(0x21, 0xf9, 0x04, 0x00, ...u16(100 / MOCK_FPS), 0x00, 0x00); // 25/100 s a frame
    out.push(0x2c, 0, 0, 0, 0, ...u16(width), ...u16(height), 0x00);
    out.push(2, ...subBlocks(lzw(pixels, 2)));
  }
  out.push(0x3b);
  return Buffer.from(out);
}

async function mockVideo(
  conn: ProviderConnection,
  model: string,
  params: VideoParams,
  signal: AbortSignal,
): Promise<VideoAnswer> {
  const seconds = secondsFor(model, params);
  const request = {
    model,
    ...params,
    seconds,
    ...(params.image !== undefined && { image: loggedImage(params.image) }),
  };
  return withWireRequest(
    () => request,
    (async () => {
      await mockMisbehaviour(params.prompt, model, { latencyMs: conn.mockLatencyMs, signal });
      const video = { mimeType: 'image/gif', data: mockGif(params.prompt, seconds, params.size) };
      return {
        videos: [video],
        media: [video],
        seconds,
        providerRequest: request,
        providerResponse: {
          model: `mock/${model}`,
          status: 'completed',
          seconds,
          frames: seconds * MOCK_FPS,
          content: note(video.mimeType, video.data.length),
        },
      };
    })(),
  );
}

export function generateVideo(
  conn: ProviderConnection,
  model: string,
  params: VideoParams,
  signal: AbortSignal,
): Promise<VideoAnswer> {
  const problem = videoProblem(model, params);
  if (problem) return Promise.reject(unsupported(conn, `${model} with this ${problem.path.slice(5)}`));
  switch (conn.descriptor.wire.format) {
    case 'openai':
      return soraVideo(conn, model, params, signal);
    case 'gemini':
      return veoVideo(conn, model, params, signal);
    case 'mock':
      return mockVideo(conn, model, params, signal);
    default:
      return Promise.reject(unsupported(conn, 'video'));
  }
}
