/**
 * Image generation through gates, end to end: POST /v3/image and OpenAI's /v1/images/generations,
 * on the mock (a real PNG) and on a local server speaking OpenAI's images API and Gemini's Imagen;
 * fallback, an exact block limit under concurrency, one log entry per request with its cost, the
 * images stored apart from the entry and served to its owner only, bad input.
 */
import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { imageKind } from '../src/dataplane/tasks/image.ts';
import { useTestApp } from './support/app.ts';
import { logEntryOf } from './support/chat.ts';
import { createGate, signUpUser } from './support/factories.ts';
import {
  expectBlockLimitHolds,
  expectFallsBack,
  expectFieldIssues,
  expectRefused,
  hasBearer,
  hasGoogleKey,
  taskRoute,
  useUpstream,
} from './support/tasks.ts';

// One local server answers as OpenAI (/v1/images/generations) and Gemini (models/M:predict).
const upstream = await useUpstream({
  serves: (path) => /^\/v1beta\/models\/[^/:]+:predict$/.test(path) || path === '/v1/images/generations',
  keyOk: (request) =>
    request.path.startsWith('/v1beta/') ? hasGoogleKey(request, 'g-key') : hasBearer(request, 'sk-test'),
});
const app = useTestApp({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${upstream.url}/v1`,
  GEMINI_API_KEY: 'g-key',
  GEMINI_BASE_URL: upstream.url,
});

type ImageAnswer = {
  id: string;
  model: string;
  images: { base64?: string; url?: string; mimeType: string; revisedPrompt?: string }[];
  size: string;
  usage: { images: number; inputTokens?: number; outputTokens?: number };
  costUsd: number;
  latencyMs: number;
};

const image = taskRoute(app, '/v3/image', { taskType: 'image', model: 'mock/image' });

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The PNG's chunks, its IHDR read, and its IDAT inflated: throws if it is not one. */
function readPng(png: Buffer) {
  expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  const chunks: { type: string; data: Buffer }[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    chunks.push({ type: png.toString('ascii', at + 4, at + 8), data: png.subarray(at + 8, at + 8 + length) });
    at += 12 + length;
  }
  expect(chunks.map((c) => c.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
  const ihdr = chunks[0]?.data as Buffer;
  const width = ihdr.readUInt32BE(0);
  const height = ihdr.readUInt32BE(4);
  const pixels = inflateSync(chunks[1]?.data as Buffer);
  return { width, height, bitDepth: ihdr[8], colourType: ihdr[9], pixels };
}

const tinyPng = (seed: number) => Buffer.from([...PNG_SIGNATURE, seed, 1, 2, 3]);

describe('POST /v3/image on the mock', () => {
  it('draws a valid PNG from the prompt, the same for the same prompt, priced per image and logged', async () => {
    const user = await signUpUser(app);
    const gate = await image.gate(user);
    const res = await image.send(user, gate.id, { prompt: 'a lighthouse at dusk', count: 2 });
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as ImageAnswer;
    expect(answer.model).toBe('mock/image');
    expect(answer.images).toHaveLength(2);
    const png = Buffer.from(answer.images[0]?.base64 ?? '', 'base64');
    const read = readPng(png);
    expect(read).toMatchObject({ width: 256, height: 256, bitDepth: 8, colourType: 2 });
    expect(read.pixels.length).toBe((256 * 3 + 1) * 256);
    expect(answer.images[0]?.mimeType).toBe('image/png');
    expect(answer.costUsd).toBeCloseTo(0.02, 10);
    expect(answer.usage.images).toBe(2);

    const again = (await (
      await image.send(user, gate.id, { prompt: 'a lighthouse at dusk' })
    ).json()) as ImageAnswer;
    expect(again.images[0]?.base64).toBe(answer.images[0]?.base64);
    const other = (await (await image.send(user, gate.id, { prompt: 'a forest' })).json()) as ImageAnswer;
    expect(other.images[0]?.base64).not.toBe(answer.images[0]?.base64);

    const large = (await (
      await image.send(user, gate.id, { prompt: 'wide', size: '1792x1024', responseFormat: 'url' })
    ).json()) as ImageAnswer;
    const url = large.images[0]?.url ?? '';
    expect(url.startsWith('data:image/png;base64,')).toBe(true);
    expect(readPng(Buffer.from(url.slice(url.indexOf(',') + 1), 'base64'))).toMatchObject({
      width: 1792,
      height: 1024,
    });

    const entry = await logEntryOf(app, answer.id);
    expect(entry).toMatchObject({ endpoint: '/v3/image', success: true, modelUsed: 'mock/image' });
    expect(Number(entry.costUsd)).toBeCloseTo(0.02, 8);
  });

  it('stores the images apart from the entry and serves them to its owner only', async () => {
    const user = await signUpUser(app);
    const gate = await image.gate(user);
    const answer = (await (
      await image.send(user, gate.id, { prompt: 'stored', count: 2 })
    ).json()) as ImageAnswer;
    const entry = await logEntryOf(app, answer.id);
    const rowJson = JSON.stringify(entry);
    for (const image of answer.images) expect(rowJson).not.toContain(image.base64?.slice(0, 200));
    const bytes0 = Buffer.from(answer.images[0]?.base64 ?? '', 'base64');
    expect(JSON.stringify(entry.providerResponse)).toContain(
      `[image/png, ${bytes0.length.toLocaleString('en-US')} bytes, stored as media 0]`,
    );

    for (const [i, image] of answer.images.entries()) {
      const res = await app.request(`/v1/logs/${answer.id}/media/${i}`, { headers: user.auth });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(image.base64 ?? '', 'base64'))).toBe(
        true,
      );
    }
    expect((await app.request(`/v1/logs/${answer.id}/media/2`, { headers: user.auth })).status).toBe(404);
    expect((await app.request(`/v1/logs/${answer.id}/media/x`, { headers: user.auth })).status).toBe(404);

    const detail = (await (await app.request(`/v1/logs/${answer.id}`, { headers: user.auth })).json()) as {
      media: { index: number; mimeType: string; bytes: number; url: string }[];
    };
    expect(detail.media).toEqual([
      { index: 0, mimeType: 'image/png', bytes: bytes0.length, url: `/v1/logs/${answer.id}/media/0` },
      expect.objectContaining({ index: 1, mimeType: 'image/png' }),
    ]);

    const stranger = await signUpUser(app);
    expect((await app.request(`/v1/logs/${answer.id}/media/0`, { headers: stranger.auth })).status).toBe(404);

    // Deleting the entry (as retention does) deletes its media.
    await app.db.prisma.logEntry.delete({ where: { id: answer.id } });
    expect(await app.db.prisma.logMedia.count({ where: { logEntryId: answer.id } })).toBe(0);
  });

  it('falls back from a failing model to the next, recording both attempts', async () => {
    const user = await signUpUser(app);
    upstream.reply({
      type: 'json',
      body: { created: 1, data: [{ b64_json: tinyPng(7).toString('base64') }] },
    });
    const answer = await expectFallsBack<ImageAnswer>(app, user, image, {
      fallback: 'openai/dall-e-2',
      data: (fail) => ({ prompt: `x ${fail}`, size: '512x512' }),
    });
    expect(answer.costUsd).toBeCloseTo(0.018, 10);
  });

  it('holds a block limit under 50 concurrent requests: no overshoot, one log entry each', async () => {
    const user = await signUpUser(app);
    const worst = imageKind.worstCase(['mock/image'], { prompt: 'p', count: 1 });
    expect(worst).toBeCloseTo(0.01, 10);
    await expectBlockLimitHolds(app, user, {
      worst,
      fits: 7,
      route: image,
      data: { prompt: 'many times' },
    });
  });

  it('reserves count times the dearest image among the models tried', () => {
    expect(
      imageKind.worstCase(['openai/dall-e-3'], { prompt: 'p', count: 3, size: '1024x1792' }),
    ).toBeCloseTo(0.36, 10);
    expect(
      imageKind.worstCase(['openai/dall-e-3', 'openai/gpt-image-1'], {
        prompt: 'p',
        count: 2,
        size: '1024x1024',
        quality: 'low',
      }),
    ).toBeCloseTo(2 * 0.011, 10);
    expect(
      imageKind.worstCase(['openai/gpt-image-1'], { prompt: 'p', count: 1, size: '1536x1024' }),
    ).toBeCloseTo(0.25, 10);
    expect(
      imageKind.worstCase(['gemini/imagen-4.0-ultra-generate-001'], { prompt: 'p', count: 4 }),
    ).toBeCloseTo(0.24, 10);
  });

  it('refuses bad input with a 400 naming the field, and a gate of another type', async () => {
    const user = await signUpUser(app);
    const gate = await image.gate(user);
    const dalle = await image.gate(user, { model: 'openai/dall-e-3' });
    await expectFieldIssues(
      (data) => image.send(user, gate.id, data),
      [
        [{}, 'data.prompt'],
        [{ prompt: '' }, 'data.prompt'],
        [{ prompt: 'x'.repeat(32_001) }, 'data.prompt'],
        [{ prompt: 'x', count: 0 }, 'data.count'],
        [{ prompt: 'x', count: 11 }, 'data.count'],
        [{ prompt: 'x', size: 'big' }, 'data.size'],
        [{ prompt: 'x', size: '100x100' }, 'data.size'],
        [{ prompt: 'x', colour: 'red' }, 'data.colour'],
      ],
    );
    await expectFieldIssues(
      (data) => image.send(user, dalle.id, data),
      [
        [{ prompt: 'x', size: '256x256' }, 'data.size'],
        [{ prompt: 'x', quality: 'high' }, 'data.quality'],
      ],
    );
    const chatGate = await createGate(app, user, { model: 'mock/echo' });
    await expectRefused(
      await image.send(user, chatGate.id, { prompt: 'x' }),
      'image requests need an image gate',
    );
  });
});

describe('providers', () => {
  it('speaks OpenAI’s /images/generations for dall-e-3, one request per image, priced by size and quality', async () => {
    const user = await signUpUser(app);
    const gate = await image.gate(user, { model: 'dall-e-3' });
    expect(gate.model).toBe('openai/dall-e-3');
    upstream.reply(
      {
        type: 'json',
        body: { created: 1, data: [{ b64_json: tinyPng(1).toString('base64'), revised_prompt: 'r1' }] },
      },
      {
        type: 'json',
        body: { created: 1, data: [{ b64_json: tinyPng(2).toString('base64'), revised_prompt: 'r2' }] },
      },
    );
    const res = await image.send(user, gate.id, {
      prompt: 'a cat',
      size: '1792x1024',
      quality: 'hd',
      style: 'natural',
      count: 2,
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as ImageAnswer;
    expect(upstream.last().path).toBe('/v1/images/generations');
    expect(upstream.last().body).toEqual({
      model: 'dall-e-3',
      prompt: 'a cat',
      n: 1,
      size: '1792x1024',
      quality: 'hd',
      style: 'natural',
      response_format: 'b64_json',
    });
    expect(answer.images.map((i) => i.revisedPrompt)).toEqual(['r1', 'r2']);
    expect(Buffer.from(answer.images[1]?.base64 ?? '', 'base64').equals(tinyPng(2))).toBe(true);
    expect(answer.costUsd).toBeCloseTo(0.24, 10);
    const entry = await logEntryOf(app, answer.id);
    expect(Number(entry.costUsd)).toBeCloseTo(0.24, 8);
    expect(JSON.stringify(entry.providerResponse)).toContain('stored as media 1');
  });

  it('speaks OpenAI’s /images/generations for gpt-image-1: no response_format, priced by the quality it reports', async () => {
    const user = await signUpUser(app);
    const gate = await image.gate(user, { model: 'gpt-image-1' });
    const usage = {
      input_tokens: 20,
      input_tokens_details: { text_tokens: 20, image_tokens: 0 },
      output_tokens: 4160,
      total_tokens: 4180,
    };
    upstream.reply({
      type: 'json',
      body: {
        created: 1,
        data: [{ b64_json: tinyPng(3).toString('base64') }],
        output_format: 'png',
        quality: 'medium',
        size: '1024x1536',
        usage,
      },
    });
    const res = await app.request('/v1/images/generations', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      json: { model: 'gpt-image-1', prompt: 'a dog', size: '1024x1536', response_format: 'url' },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(upstream.last().body).toEqual({ model: 'gpt-image-1', prompt: 'a dog', n: 1, size: '1024x1536' });
    const body = (await res.json()) as {
      created: number;
      data: { b64_json?: string; url?: string }[];
      usage: unknown;
    };
    expect(body.data[0]?.url).toBeUndefined();
    expect(Buffer.from(body.data[0]?.b64_json ?? '', 'base64').equals(tinyPng(3))).toBe(true);
    expect(body.usage).toEqual(usage);
    expect(typeof body.created).toBe('number');
    expect(Number(res.headers.get('x-gatehouse-cost-usd'))).toBeCloseTo(0.063, 10);
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect(entry).toMatchObject({
      endpoint: '/v1/images/generations',
      promptTokens: 20,
      completionTokens: 4160,
    });
    expect(Number(entry.costUsd)).toBeCloseTo(0.063, 8);
  });

  it('speaks Gemini’s Imagen :predict', async () => {
    const user = await signUpUser(app);
    const gate = await image.gate(user, { model: 'gemini/imagen-4.0-generate-001' });
    upstream.reply({
      type: 'json',
      body: {
        predictions: [
          { bytesBase64Encoded: tinyPng(4).toString('base64'), mimeType: 'image/png' },
          { bytesBase64Encoded: tinyPng(5).toString('base64'), mimeType: 'image/png' },
        ],
      },
    });
    const res = await image.send(user, gate.id, { prompt: 'a bridge', count: 2, size: '1408x768' });
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as ImageAnswer;
    expect(upstream.last().path).toBe('/v1beta/models/imagen-4.0-generate-001:predict');
    expect(upstream.last().body).toEqual({
      instances: [{ prompt: 'a bridge' }],
      parameters: { sampleCount: 2, aspectRatio: '16:9' },
    });
    expect(Buffer.from(answer.images[0]?.base64 ?? '', 'base64').equals(tinyPng(4))).toBe(true);
    expect(answer.costUsd).toBeCloseTo(0.08, 10);
    await app.runtime.logs.drain();
    const media = await app.request(`/v1/logs/${answer.id}/media/1`, { headers: user.auth });
    expect(media.status).toBe(200);
    expect(Buffer.from(await media.arrayBuffer()).equals(tinyPng(5))).toBe(true);
  });
});

describe('POST /v1/images/generations (OpenAI-compatible)', () => {
  it('answers OpenAI’s format in b64_json from the mock', async () => {
    const user = await signUpUser(app);
    const gate = await image.gate(user);
    const res = await app.request('/v1/images/generations', {
      method: 'POST',
      headers: user.auth,
      json: { model: gate.id, prompt: 'a boat', n: 2, response_format: 'b64_json' },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as {
      created: number;
      data: { b64_json: string; revised_prompt?: string }[];
    };
    expect(Object.keys(body).sort()).toEqual(['created', 'data']);
    expect(body.data).toHaveLength(2);
    expect(readPng(Buffer.from(body.data[0]?.b64_json ?? '', 'base64')).width).toBe(256);
    expect(body.data[0]?.revised_prompt).toContain('a boat');
  });

  it('answers errors in OpenAI’s shape', async () => {
    const user = await signUpUser(app);
    const gate = await image.gate(user);
    const res = await app.request('/v1/images/generations', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      json: { n: 1 },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { type: string; param: string } }).error).toMatchObject({
      type: 'invalid_request_error',
      param: 'prompt',
    });
  });
});
