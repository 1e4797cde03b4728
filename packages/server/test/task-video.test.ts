/**
 * Video through gates, end to end: POST /v3/video and GET /v3/video/:id on the mock (an animated
 * GIF, decoded here frame by frame) and on local servers speaking OpenAI's Sora API and Gemini's
 * Veo API; the 202 job when the wait runs out, fallback, an exact block limit under concurrency,
 * one log entry per request, written when the run ends, another user's job, bad input.
 */
import { describe, expect, it } from 'vitest';
import { videoKind } from '../src/dataplane/tasks/video.ts';
import { useTestApp } from './support/app.ts';
import { logEntriesOf, logEntryOf, type NativeError, readGate } from './support/chat.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';
import {
  expectBlockLimitHolds,
  expectFallsBack,
  hasBearer,
  hasGoogleKey,
  taskRoute,
  useUpstream,
} from './support/tasks.ts';

const upstream = await useUpstream({
  keyOk: (request) =>
    request.path.startsWith('/v1beta/') ? hasGoogleKey(request, 'g-key') : hasBearer(request, 'sk-test'),
});
const WAIT_MS = 1500;
const app = useTestApp({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${upstream.url}/v1`,
  GEMINI_API_KEY: 'g-key',
  GEMINI_BASE_URL: upstream.url,
  GATEHOUSE_VIDEO_WAIT_MS: String(WAIT_MS),
});

type VideoBody = {
  id: string;
  status: 'running' | 'succeeded' | 'failed';
  model?: string;
  videos?: { base64: string; mimeType: string; url: string; bytes: number }[];
  seconds?: number;
  costUsd?: number;
  error?: { code: string; message: string };
};

const video = taskRoute(app, '/v3/video', { taskType: 'video', model: 'mock/video' });

const getJob = (user: TestUser, id: string) => app.request(`/v3/video/${id}`, { headers: user.auth });

/** The answer of a request, following its job when it was answered 202. */
async function finished(user: TestUser, res: Response): Promise<VideoBody> {
  let body = (await res.json()) as VideoBody;
  for (let i = 0; body.status === 'running' && i < 200; i++) {
    await new Promise((r) => setTimeout(r, 100));
    body = (await (await getJob(user, body.id)).json()) as VideoBody;
  }
  return body;
}

/** Decodes a GIF's frames (LZW and all): the file is a real, whole animation. */
function gifFrames(gif: Buffer): { width: number; height: number; frames: Uint8Array[] } {
  expect(gif.subarray(0, 6).toString('latin1')).toBe('GIF89a');
  const width = gif.readUInt16LE(6);
  const height = gif.readUInt16LE(8);
  const at = (i: number) => gif.readUInt8(i);
  let p = 13 + (at(10) & 0x80 ? 3 * 2 ** ((at(10) & 7) + 1) : 0);
  const frames: Uint8Array[] = [];
  const blocks = () => {
    const parts: Buffer[] = [];
    while (at(p) !== 0) {
      parts.push(gif.subarray(p + 1, p + 1 + at(p)));
      p += 1 + at(p);
    }
    p++;
    return Buffer.concat(parts);
  };
  for (;;) {
    const tag = at(p++);
    if (tag === 0x3b) break;
    if (tag === 0x21) {
      p++;
      blocks();
    } else if (tag === 0x2c) {
      const w = gif.readUInt16LE(p + 4);
      const h = gif.readUInt16LE(p + 6);
      p += 9;
      const min = at(p++);
      const data = blocks();
      const out: number[] = [];
      const clear = 1 << min;
      let size = min + 1;
      let dict: number[][] = [];
      const reset = () => {
        dict = Array.from({ length: clear + 2 }, (_, i) => [i]);
        size = min + 1;
      };
      reset();
      let prev: number[] | null = null;
      let bit = 0;
      while (bit + size <= data.length * 8) {
        let code = 0;
        for (let i = 0; i < size; i++, bit++) code |= ((data.readUInt8(bit >> 3) >> (bit & 7)) & 1) << i;
        if (code === clear) {
          reset();
          prev = null;
          continue;
        }
        if (code === clear + 1) break;
        const entry: number[] = dict[code] ?? (prev ? [...prev, prev[0] as number] : []);
        expect(entry.length, 'a code the table does not hold').toBeGreaterThan(0);
        out.push(...entry);
        if (prev) dict.push([...prev, entry[0] as number]);
        if (dict.length === 1 << size && size < 12) size++;
        prev = entry;
      }
      expect(out.length).toBe(w * h);
      frames.push(Uint8Array.from(out));
    } else throw new Error(`unexpected GIF block ${tag}`);
  }
  return { width, height, frames };
}

describe('POST /v3/video on the mock', () => {
  it('answers a real animated GIF within the wait, priced per second, and logs it', async () => {
    const user = await signUpUser(app);
    const gate = await video.gate(user);
    const res = await video.send(user, gate.id, { prompt: 'a red kite over the sea', duration: 3 });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as VideoBody;
    expect(body).toMatchObject({ status: 'succeeded', model: 'mock/video', seconds: 3 });
    expect(body.costUsd).toBeCloseTo(3 * 0.05, 10);
    const file = Buffer.from(body.videos?.[0]?.base64 ?? '', 'base64');
    expect(body.videos?.[0]?.mimeType).toBe('image/gif');
    const gif = gifFrames(file);
    expect([gif.width, gif.height]).toEqual([64, 36]);
    expect(gif.frames).toHaveLength(3 * 4);
    expect(gif.frames[0]).not.toEqual(gif.frames[5]); // it moves

    // The same prompt makes the same file; another prompt other colours.
    const again = (await (
      await video.send(user, gate.id, { prompt: 'a red kite over the sea', duration: 3 })
    ).json()) as VideoBody;
    expect(again.videos?.[0]?.base64).toBe(body.videos?.[0]?.base64);

    const content = await app.request(`/v3/video/${body.id}/content`, { headers: user.auth });
    expect(content.headers.get('content-type')).toBe('image/gif');
    expect(Buffer.from(await content.arrayBuffer()).equals(file)).toBe(true);

    const entry = await logEntryOf(app, body.id);
    expect(entry).toMatchObject({ endpoint: '/v3/video', success: true, modelUsed: 'mock/video' });
    expect(Number(entry.costUsd)).toBeCloseTo(0.15, 8);
    expect(JSON.stringify(entry.providerResponse)).not.toMatch(/R0lGOD/); // no base64 GIF in the log
  });

  it('answers 202 past the wait; the job reports running, then the video; the log entry comes at the end', async () => {
    const user = await signUpUser(app);
    const gate = await video.gate(user);
    const res = await video.send(user, gate.id, { prompt: `slow clouds [mock:delay=${WAIT_MS + 3000}]` });
    expect(res.status, await res.clone().text()).toBe(202);
    const accepted = (await res.json()) as VideoBody;
    expect(accepted.status).toBe('running');
    expect(res.headers.get('location')).toBe(`/v3/video/${accepted.id}`);

    const running = (await (await getJob(user, accepted.id)).json()) as VideoBody;
    expect(running.status).toBe('running');
    await app.runtime.logs.drain();
    expect(await logEntriesOf(app, gate.id)).toHaveLength(0);

    const done = await finished(user, new Response(JSON.stringify(running)));
    expect(done).toMatchObject({ id: accepted.id, status: 'succeeded', model: 'mock/video', seconds: 4 });
    expect(gifFrames(Buffer.from(done.videos?.[0]?.base64 ?? '', 'base64')).frames).toHaveLength(16);
    expect(done.costUsd).toBeCloseTo(4 * 0.05, 10);
    const entry = await logEntryOf(app, accepted.id);
    expect(entry).toMatchObject({ success: true, statusCode: 200 });
    expect(Number(entry.costUsd)).toBeCloseTo(0.2, 8);
    expect(await logEntriesOf(app, gate.id)).toHaveLength(1);
    // A gate without a limit has its spending summed and written every 250 ms (on PostgreSQL).
    await expect.poll(async () => (await readGate(app, user, gate.id)).spendingCurrent).toBeCloseTo(0.2, 8);
  });

  it('reports a failed job, and falls back from a failing model', async () => {
    const user = await signUpUser(app);
    upstream.reply(
      { type: 'json', body: { id: 'video_1', status: 'queued', seconds: '4' } },
      { type: 'json', body: { id: 'video_1', status: 'completed', seconds: '4' } },
      { type: 'bytes', contentType: 'video/mp4', data: Buffer.from('\0\0\0\x18ftypmp42 fake mp4') },
    );
    const body = await expectFallsBack(app, user, video, {
      fallback: 'openai/sora-2',
      data: (fail) => ({ prompt: `boats ${fail}` }),
      answer: (res) => finished(user, res),
    });
    expect(body).toMatchObject({ status: 'succeeded', model: 'openai/sora-2', seconds: 4 });

    // A job failing after its 202 reports the failure.
    const single = await video.gate(user);
    const late = await video.send(user, single.id, {
      prompt: `nope [mock:delay=${WAIT_MS + 300}] [mock:fail=500]`,
    });
    expect(late.status).toBe(202);
    const failed = await finished(user, late);
    expect(failed.status).toBe('failed');
    expect(failed.error?.code).toBe('upstream_error');
    expect(failed.videos).toBeUndefined();
    expect(await logEntryOf(app, failed.id)).toMatchObject({ success: false });
  });

  it('holds a block limit under 50 concurrent requests: no overshoot, one log entry each', async () => {
    const user = await signUpUser(app);
    const worst = videoKind.worstCase(['mock/video'], { prompt: 'x', seconds: 2 });
    expect(worst).toBeCloseTo(0.1, 10);
    await expectBlockLimitHolds(app, user, {
      worst,
      fits: 5,
      tolerance: 1e-9,
      route: video,
      data: { prompt: 'the same clip', duration: 2 },
    });
  });

  it("answers 404 for another user's job, and 400 naming the field for bad input", async () => {
    const owner = await signUpUser(app);
    const other = await signUpUser(app);
    const gate = await video.gate(owner);
    const body = (await (await video.send(owner, gate.id, { prompt: 'mine' })).json()) as VideoBody;
    expect((await getJob(other, body.id)).status).toBe(404);
    expect((await app.request(`/v3/video/${body.id}/content`, { headers: other.auth })).status).toBe(404);
    expect((await getJob(owner, 'not-a-uuid')).status).toBe(404);

    const sora = await video.gate(owner, { model: 'openai/sora-2' });
    const cases: [string, Record<string, unknown>, string][] = [
      [gate.id, {}, 'data.prompt'],
      [gate.id, { prompt: '  ' }, 'data.prompt'],
      [gate.id, { prompt: 'x', duration: 0 }, 'data.duration'],
      [gate.id, { prompt: 'x', duration: 2.5 }, 'data.duration'],
      [gate.id, { prompt: 'x', size: '640x480' }, 'data.size'],
      [gate.id, { prompt: 'x', image: 'http://example.com/a.png' }, 'data.image'],
      [gate.id, { prompt: 'x', image: 'data:text/plain;base64,aGVsbG8=' }, 'data.image'],
      [sora.id, { prompt: 'x', duration: 5 }, 'data.duration'],
      [sora.id, { prompt: 'x', size: '1792x1024' }, 'data.size'],
    ];
    for (const [gateId, data, field] of cases) {
      const res = await video.send(owner, gateId, data);
      expect(res.status, JSON.stringify(data)).toBe(400);
      const error = ((await res.json()) as NativeError).error;
      expect(JSON.stringify(error), JSON.stringify(data)).toContain(field);
    }
    const chatGate = await createGate(app, owner, { taskType: 'chat', model: 'mock/echo' });
    expect((await video.send(owner, chatGate.id, { prompt: 'x' })).status).toBe(400);
  });
});

describe('POST /v3/video on the providers’ wires', () => {
  it('OpenAI Sora: creates, polls until completed, downloads the content', async () => {
    const user = await signUpUser(app);
    const gate = await video.gate(user, { model: 'openai/sora-2-pro' });
    const mp4 = Buffer.from('\0\0\0\x18ftypmp42\0\0\0\0mp42isom a tiny fake movie');
    upstream.reply(
      { type: 'json', body: { id: 'video_abc', object: 'video', status: 'queued', seconds: '8' } },
      { type: 'json', body: { id: 'video_abc', status: 'in_progress', progress: 40, seconds: '8' } },
      { type: 'json', body: { id: 'video_abc', status: 'completed', progress: 100, seconds: '8' } },
      { type: 'bytes', contentType: 'video/mp4', data: mp4 },
    );
    const image = 'data:image/png;base64,iVBORw0KGgo=';
    const res = await video.send(user, gate.id, {
      prompt: 'a lighthouse',
      duration: 8,
      size: '1792x1024',
      image,
    });
    const body = await finished(user, res);
    expect(body).toMatchObject({ status: 'succeeded', model: 'openai/sora-2-pro', seconds: 8 });
    expect(Buffer.from(body.videos?.[0]?.base64 ?? '', 'base64').equals(mp4)).toBe(true);
    expect(body.videos?.[0]?.mimeType).toBe('video/mp4');
    expect(body.costUsd).toBeCloseTo(8 * 0.5, 10);

    const [create, poll1, poll2, download] = upstream.requests;
    expect([create?.method, create?.path]).toEqual(['POST', '/v1/videos']);
    expect(create?.body).toEqual({
      model: 'sora-2-pro',
      prompt: 'a lighthouse',
      seconds: '8',
      size: '1792x1024',
      input_reference: { image_url: image },
    });
    expect([poll1?.method, poll1?.path, poll2?.path]).toEqual([
      'GET',
      '/v1/videos/video_abc',
      '/v1/videos/video_abc',
    ]);
    expect([download?.method, download?.path]).toEqual(['GET', '/v1/videos/video_abc/content']);
    expect(download?.headers.authorization).toBe('Bearer sk-test');

    const entry = await logEntryOf(app, body.id);
    expect(JSON.stringify(entry.providerRequest)).not.toContain('iVBORw0KGgo');
    expect(entry.providerResponse).toMatchObject({
      status: 'completed',
      content: expect.stringMatching(/video\/mp4/),
    });
  });

  it('OpenAI Sora: a failed job fails the request with the provider’s reason', async () => {
    const user = await signUpUser(app);
    const gate = await video.gate(user, { model: 'openai/sora-2' });
    upstream.reply(
      { type: 'json', body: { id: 'video_x', status: 'queued' } },
      {
        type: 'json',
        body: {
          id: 'video_x',
          status: 'failed',
          error: { code: 'moderation_blocked', message: 'blocked by moderation' },
        },
      },
    );
    const res = await video.send(user, gate.id, { prompt: 'something refused' });
    const body = res.status === 202 ? await finished(user, res) : null;
    if (body) expect(body.status).toBe('failed');
    else {
      expect(res.status).toBe(400);
      expect(((await res.json()) as NativeError).error.message).toMatch(/moderation/);
    }
  });

  it('Gemini Veo: predictLongRunning, polls the operation, downloads the video with the key', async () => {
    const user = await signUpUser(app);
    const gate = await video.gate(user, { model: 'gemini/veo-3.0-fast-generate-001' });
    const mp4 = Buffer.from('\0\0\0\x18ftypisom veo fake movie');
    const op = 'models/veo-3.0-fast-generate-001/operations/op123';
    const uri = `${upstream.url}/v1beta/files/vid1:download?alt=media`;
    upstream.reply(
      { type: 'json', body: { name: op } },
      { type: 'json', body: { name: op, done: false } },
      {
        type: 'json',
        body: {
          name: op,
          done: true,
          response: { generateVideoResponse: { generatedSamples: [{ video: { uri } }] } },
        },
      },
      { type: 'bytes', contentType: 'video/mp4', data: mp4 },
    );
    const res = await video.send(user, gate.id, {
      prompt: 'a fox in snow',
      duration: 6,
      size: '720x1280',
      image: 'data:image/jpeg;base64,/9j/4AAQ',
    });
    const body = await finished(user, res);
    expect(body).toMatchObject({
      status: 'succeeded',
      model: 'gemini/veo-3.0-fast-generate-001',
      seconds: 6,
    });
    expect(Buffer.from(body.videos?.[0]?.base64 ?? '', 'base64').equals(mp4)).toBe(true);
    expect(body.costUsd).toBeCloseTo(6 * 0.15, 10);

    const [create, poll1, poll2, download] = upstream.requests;
    expect([create?.method, create?.path]).toEqual([
      'POST',
      '/v1beta/models/veo-3.0-fast-generate-001:predictLongRunning',
    ]);
    expect(create?.body).toEqual({
      instances: [
        { prompt: 'a fox in snow', image: { bytesBase64Encoded: '/9j/4AAQ', mimeType: 'image/jpeg' } },
      ],
      parameters: { durationSeconds: 6, aspectRatio: '9:16' },
    });
    expect([poll1?.method, poll1?.path, poll2?.path]).toEqual(['GET', `/v1beta/${op}`, `/v1beta/${op}`]);
    expect(download?.path).toBe('/v1beta/files/vid1:download?alt=media');
    expect(download?.headers['x-goog-api-key']).toBe('g-key');
  });
});
