/**
 * Speech, transcription and translation through gates, end to end: POST /v3/tts, /v3/stt and
 * /v3/audio, OpenAI's /v1/audio/speech, /v1/audio/transcriptions and /v1/audio/translations, on
 * the mock and on local servers speaking OpenAI's, Groq's and Gemini's audio APIs; fallback, an
 * exact block limit under concurrency, one log entry per request, bad input.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { speechKind } from '../src/dataplane/tasks/speech.ts';
import { wavInfo } from '../src/domain/audioFile.ts';
import { findModel } from '../src/domain/catalog.ts';
import { useTestApp } from './support/app.ts';
import { attemptsOf, logEntriesOf, logEntryOf, type NativeError, readGate } from './support/chat.ts';
import { startUpstream } from './support/emulators/upstream.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';

// One local server answers as OpenAI (/v1/audio/*), Groq (/groq/openai/v1/audio/*) and Gemini
// (/v1beta/models/M:generateContent), each checking its key as the real one does.
const upstream = await startUpstream((request) => {
  const gemini = /^\/v1beta\/models\/[^/:]+:generateContent$/.test(request.path);
  const audio = /^(\/groq\/openai)?\/v1\/audio\/(speech|transcriptions|translations)$/.test(request.path);
  if (request.method !== 'POST' || !(gemini || audio)) {
    return { type: 'json', status: 404, body: { error: { message: `no route ${request.path}` } } };
  }
  const keyOk = gemini
    ? request.headers['x-goog-api-key'] === 'g-key'
    : request.headers.authorization ===
      (request.path.startsWith('/groq') ? 'Bearer groq-key' : 'Bearer sk-test');
  if (!keyOk) return { type: 'json', status: 401, body: { error: { message: 'bad key' } } };
  return null;
});
const app = useTestApp({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${upstream.url}/v1`,
  GROQ_API_KEY: 'groq-key',
  GROQ_BASE_URL: `${upstream.url}/groq/openai/v1`,
  GEMINI_API_KEY: 'g-key',
  GEMINI_BASE_URL: upstream.url,
});
afterEach(() => {
  const left = upstream.pending();
  upstream.reset();
  expect(left, 'scripted replies left unused').toBe(0);
});
afterAll(() => upstream.close());

type SpeechAnswer = {
  id: string;
  model: string;
  audio: { base64: string; format: string; mimeType: string; duration: number | null };
  usage: { characters: number };
  costUsd: number;
  latencyMs: number;
};

function post(user: TestUser, path: string, gateId: string, data: Record<string, unknown>) {
  return app.request(path, { method: 'POST', headers: user.auth, json: { gateId, data } });
}

const tts = (user: TestUser, gateId: string, data: Record<string, unknown>) =>
  post(user, '/v3/tts', gateId, data);

const ttsGate = (user: TestUser, overrides: Record<string, unknown> = {}) =>
  createGate(app, user, { taskType: 'tts', model: 'mock/tts', ...overrides });

const perMChars = (id: string) => findModel(id)?.unitPrices.perMCharacters ?? Number.NaN;

describe('POST /v3/tts on the mock', () => {
  it('answers a valid WAV whose length follows the text, priced per character, and logs it', async () => {
    const user = await signUpUser(app);
    const gate = await ttsGate(user);
    const res = await tts(user, gate.id, { input: 'Hello there', responseFormat: 'mp3' });
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as SpeechAnswer;
    expect(answer.model).toBe('mock/tts');
    // The mock makes WAV only, and says so.
    expect(answer.audio.format).toBe('wav');
    expect(answer.audio.mimeType).toBe('audio/wav');
    const wav = Buffer.from(answer.audio.base64, 'base64');
    const info = wavInfo(wav);
    expect(info).toMatchObject({ channels: 1, sampleRate: 16_000, bitsPerSample: 16 });
    expect(info?.seconds).toBeCloseTo(11 * 0.06, 6);
    expect(answer.audio.duration).toBeCloseTo(0.66, 6);
    expect(answer.usage).toEqual({ characters: 11 });
    expect(answer.costUsd).toBeCloseTo((11 * perMChars('mock/tts')) / 1e6, 14);

    const longer = (await (
      await tts(user, gate.id, { input: 'Hello there, a longer text' })
    ).json()) as SpeechAnswer;
    expect(longer.audio.duration).toBeCloseTo(26 * 0.06, 6);
    const again = (await (await tts(user, gate.id, { input: 'Hello there' })).json()) as SpeechAnswer;
    expect(again.audio.base64).toBe(answer.audio.base64);

    const entry = await logEntryOf(app, answer.id);
    expect(entry).toMatchObject({ endpoint: '/v3/tts', success: true, modelUsed: 'mock/tts' });
    expect(Number(entry.costUsd)).toBeCloseTo(answer.costUsd, 10);
    // The log keeps a note of the audio, never its bytes.
    const logged = JSON.stringify(entry.providerResponse);
    expect(logged).toContain('audio/wav');
    expect(logged.length).toBeLessThan(1000);
  });

  it('falls back from a failing model to the next, recording both attempts', async () => {
    const user = await signUpUser(app);
    const gate = await ttsGate(user, { routingStrategy: 'fallback', fallbackModels: ['tts-1'] });
    upstream.reply({ type: 'bytes', contentType: 'audio/mpeg', data: Buffer.from('ID3fake-mp3-bytes') });
    const res = await tts(user, gate.id, { input: 'hi [mock:fail=503@mock/tts]' });
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as SpeechAnswer;
    expect(answer.model).toBe('openai/tts-1');
    expect(answer.audio.format).toBe('mp3');
    const entry = await logEntryOf(app, answer.id);
    expect(attemptsOf(entry).map((a) => [a.model, a.ok, a.status])).toEqual([
      ['mock/tts', false, 503],
      ['openai/tts-1', true, 200],
    ]);
  });

  it('holds a block limit under 50 concurrent requests: no overshoot, one log entry each', async () => {
    const user = await signUpUser(app);
    const input = 'the same sentence, spoken many times over';
    const N = 7;
    const worst = speechKind.worstCase(['mock/tts'], { input, format: 'wav' });
    expect(worst).toBeCloseTo((input.length * 15) / 1e6, 14);
    const limit = Number((N * worst).toFixed(10));
    const gate = await ttsGate(user, { spendingLimit: limit, spendingEnforcement: 'block' });
    const responses = await Promise.all(Array.from({ length: 50 }, () => tts(user, gate.id, { input })));
    const statuses = responses.map((r) => r.status);
    const passed = statuses.filter((s) => s === 200).length;
    expect(passed).toBeGreaterThan(0);
    expect(passed).toBeLessThanOrEqual(N);
    expect(statuses.filter((s) => s === 402)).toHaveLength(50 - passed);
    const after = await readGate(app, user, gate.id);
    expect(after.spendingCurrent).toBeLessThanOrEqual(limit);
    expect(await logEntriesOf(app, gate.id)).toHaveLength(50);
  });

  it('refuses bad input with a 400 naming the field, and a gate of another type', async () => {
    const user = await signUpUser(app);
    const gate = await ttsGate(user);
    for (const [data, path] of [
      [{}, 'data.input'],
      [{ input: '' }, 'data.input'],
      [{ input: 'x'.repeat(4097) }, 'data.input'],
      [{ input: 'x', speed: 5 }, 'data.speed'],
      [{ input: 'x', responseFormat: 'ogg' }, 'data.responseFormat'],
      [{ input: 'x', colour: 'red' }, 'data'],
    ] as const) {
      const res = await tts(user, gate.id, data);
      expect(res.status, JSON.stringify(data)).toBe(400);
      const body = (await res.json()) as NativeError;
      expect(body.error.details?.issues?.[0]?.path, JSON.stringify(data)).toBe(path);
    }
    const chatGate = await createGate(app, user, { model: 'mock/echo' });
    const wrong = await tts(user, chatGate.id, { input: 'x' });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as NativeError).error.message).toContain('speech requests need a tts gate');
  });
});

describe('speech providers', () => {
  it('speaks OpenAI’s /audio/speech: JSON in, the audio’s bytes out', async () => {
    const user = await signUpUser(app);
    const gate = await ttsGate(user, { model: 'tts-1-hd' });
    const mp3 = Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0, 1, 2, 3]);
    upstream.reply({ type: 'bytes', contentType: 'audio/mpeg', data: mp3 });
    const res = await tts(user, gate.id, { input: 'Bonjour', voice: 'nova', speed: 1.5 });
    const answer = (await res.json()) as SpeechAnswer;
    expect(upstream.last().path).toBe('/v1/audio/speech');
    expect(upstream.last().body).toEqual({
      model: 'tts-1-hd',
      input: 'Bonjour',
      voice: 'nova',
      response_format: 'mp3',
      speed: 1.5,
    });
    expect(Buffer.from(answer.audio.base64, 'base64')).toEqual(mp3);
    expect(answer.audio).toMatchObject({ format: 'mp3', mimeType: 'audio/mpeg', duration: null });
    expect(answer.costUsd).toBeCloseTo((7 * 30) / 1e6, 14);
  });

  it('speaks Gemini’s TTS (generateContent, PCM in base64) and wraps the PCM into a WAV', async () => {
    const user = await signUpUser(app);
    const gate = await ttsGate(user, { model: 'gemini-2.5-flash-preview-tts' });
    const pcm = Buffer.alloc(24_000 * 2); // one second at 24 kHz
    upstream.reply({
      type: 'json',
      body: {
        candidates: [
          {
            content: {
              parts: [
                { inlineData: { mimeType: 'audio/L16;codec=pcm;rate=24000', data: pcm.toString('base64') } },
              ],
            },
          },
        ],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 25 },
      },
    });
    const res = await tts(user, gate.id, { input: 'Say hi', voice: 'puck' });
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as SpeechAnswer;
    expect(upstream.last().path).toBe('/v1beta/models/gemini-2.5-flash-preview-tts:generateContent');
    expect(upstream.last().body).toEqual({
      contents: [{ parts: [{ text: 'Say hi' }] }],
      generationConfig: {
        responseModalities: ['AUDIO'],
        speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Puck' } } },
      },
    });
    const wav = Buffer.from(answer.audio.base64, 'base64');
    expect(wavInfo(wav)).toMatchObject({ sampleRate: 24_000, channels: 1, bitsPerSample: 16, seconds: 1 });
    expect(answer.audio).toMatchObject({ format: 'wav', duration: 1 });
    expect(answer.costUsd).toBeCloseTo((6 * perMChars('gemini/gemini-2.5-flash-preview-tts')) / 1e6, 14);
    const entry = await logEntryOf(app, answer.id);
    expect(JSON.stringify(entry.providerResponse)).not.toContain(pcm.toString('base64').slice(0, 100));
  });
});

describe('POST /v1/audio/speech (OpenAI-compatible)', () => {
  it('answers the audio’s bytes with their content type: a valid WAV from the mock', async () => {
    const user = await signUpUser(app);
    const gate = await ttsGate(user);
    const res = await app.request('/v1/audio/speech', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      json: { model: 'mock/tts', input: 'The quick brown fox', voice: 'alloy', response_format: 'wav' },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/wav');
    expect(res.headers.get('x-gatehouse-request-id')).toBeTruthy();
    const wav = Buffer.from(await res.arrayBuffer());
    expect(wav.toString('latin1', 0, 4)).toBe('RIFF');
    expect(wavInfo(wav)?.seconds).toBeCloseTo(19 * 0.06, 6);
  });

  it('answers errors in OpenAI’s shape', async () => {
    const user = await signUpUser(app);
    const gate = await ttsGate(user);
    const res = await app.request('/v1/audio/speech', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      json: { model: gate.id, input: 'x' },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error).toMatchObject({
      type: 'invalid_request_error',
      param: 'voice',
    });
  });
});
