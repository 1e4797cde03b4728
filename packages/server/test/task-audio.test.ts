/**
 * Speech, transcription and translation through gates, end to end: POST /v3/tts, /v3/stt and
 * /v3/audio, OpenAI's /v1/audio/speech, /v1/audio/transcriptions and /v1/audio/translations, on
 * the mock and on local servers speaking OpenAI's, Groq's and Gemini's audio APIs; fallback, an
 * exact block limit under concurrency, one log entry per request, bad input.
 */
import { describe, expect, it } from 'vitest';
import { speechKind } from '../src/dataplane/tasks/speech.ts';
import { transcriptionKind } from '../src/dataplane/tasks/transcription.ts';
import { wavFile, wavInfo } from '../src/domain/audioFile.ts';
import { findModel } from '../src/domain/catalog.ts';
import { useTestApp } from './support/app.ts';
import { logEntryOf, type NativeError } from './support/chat.ts';
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

// One local server answers as OpenAI (/v1/audio/*), Groq (/groq/openai/v1/audio/*) and Gemini
// (/v1beta/models/M:generateContent), each checking its key as the real one does.
const upstream = await useUpstream({
  serves: (path) =>
    /^\/v1beta\/models\/[^/:]+:generateContent$/.test(path) ||
    /^(\/groq\/openai)?\/v1\/audio\/(speech|transcriptions|translations)$/.test(path),
  keyOk: (request) =>
    request.path.startsWith('/v1beta/')
      ? hasGoogleKey(request, 'g-key')
      : hasBearer(request, request.path.startsWith('/groq') ? 'groq-key' : 'sk-test'),
});
const app = useTestApp({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${upstream.url}/v1`,
  GROQ_API_KEY: 'groq-key',
  GROQ_BASE_URL: `${upstream.url}/groq/openai/v1`,
  GEMINI_API_KEY: 'g-key',
  GEMINI_BASE_URL: upstream.url,
});

type SpeechAnswer = {
  id: string;
  model: string;
  audio: { base64: string; format: string; mimeType: string; duration: number | null };
  usage: { characters: number };
  costUsd: number;
  latencyMs: number;
};

const speech = taskRoute(app, '/v3/tts', { taskType: 'tts', model: 'mock/tts' });

const perMChars = (id: string) => findModel(id)?.unitPrices.perMCharacters ?? Number.NaN;

describe('POST /v3/tts on the mock', () => {
  it('answers a valid WAV whose length follows the text, priced per character, and logs it', async () => {
    const user = await signUpUser(app);
    const gate = await speech.gate(user);
    const res = await speech.send(user, gate.id, { input: 'Hello there', responseFormat: 'mp3' });
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
      await speech.send(user, gate.id, { input: 'Hello there, a longer text' })
    ).json()) as SpeechAnswer;
    expect(longer.audio.duration).toBeCloseTo(26 * 0.06, 6);
    const again = (await (await speech.send(user, gate.id, { input: 'Hello there' })).json()) as SpeechAnswer;
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
    upstream.reply({ type: 'bytes', contentType: 'audio/mpeg', data: Buffer.from('ID3fake-mp3-bytes') });
    const answer = await expectFallsBack<SpeechAnswer>(app, user, speech, {
      fallback: 'tts-1',
      to: 'openai/tts-1',
      data: (fail) => ({ input: `hi ${fail}` }),
    });
    expect(answer.audio.format).toBe('mp3');
  });

  it('holds a block limit under 50 concurrent requests: no overshoot, one log entry each', async () => {
    const user = await signUpUser(app);
    const input = 'the same sentence, spoken many times over';
    const worst = speechKind.worstCase(['mock/tts'], { input, format: 'wav' });
    expect(worst).toBeCloseTo((input.length * 15) / 1e6, 14);
    await expectBlockLimitHolds(app, user, {
      worst,
      fits: 7,
      route: speech,
      data: { input },
    });
  });

  it('refuses bad input with a 400 naming the field, and a gate of another type', async () => {
    const user = await signUpUser(app);
    const gate = await speech.gate(user);
    await expectFieldIssues(
      (data) => speech.send(user, gate.id, data),
      [
        [{}, 'data.input'],
        [{ input: '' }, 'data.input'],
        [{ input: 'x'.repeat(4097) }, 'data.input'],
        [{ input: 'x', speed: 5 }, 'data.speed'],
        [{ input: 'x', responseFormat: 'ogg' }, 'data.responseFormat'],
        [{ input: 'x', colour: 'red' }, 'data.colour'],
      ],
    );
    const chatGate = await createGate(app, user, { model: 'mock/echo' });
    await expectRefused(
      await speech.send(user, chatGate.id, { input: 'x' }),
      'speech requests need a tts gate',
    );
  });
});

describe('speech providers', () => {
  it('speaks OpenAI’s /audio/speech: JSON in, the audio’s bytes out', async () => {
    const user = await signUpUser(app);
    const gate = await speech.gate(user, { model: 'tts-1-hd' });
    const mp3 = Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0, 1, 2, 3]);
    upstream.reply({ type: 'bytes', contentType: 'audio/mpeg', data: mp3 });
    const res = await speech.send(user, gate.id, { input: 'Bonjour', voice: 'nova', speed: 1.5 });
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
    const gate = await speech.gate(user, { model: 'gemini-2.5-flash-preview-tts' });
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
    const res = await speech.send(user, gate.id, { input: 'Say hi', voice: 'puck' });
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
    const gate = await speech.gate(user);
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
    const gate = await speech.gate(user);
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

type TranscriptAnswer = {
  id: string;
  model: string;
  text: string;
  segments?: { id: number; start: number; end: number; text: string }[];
  language?: string;
  duration: number | null;
  costUsd: number;
};

/** A WAV of `seconds` of silence, 16 kHz mono. */
const silence = (seconds: number) => wavFile(Buffer.alloc(Math.round(seconds * 16_000) * 2), 16_000);

const transcription = taskRoute(app, '/v3/stt', { taskType: 'stt', model: 'mock/stt' });
const translation = taskRoute(app, '/v3/audio', { taskType: 'audio', model: 'mock/stt' });

function multipart(fields: Record<string, string>, file?: { data: Buffer; name: string; type: string }) {
  const form = new FormData();
  if (file) form.append('file', new Blob([new Uint8Array(file.data)], { type: file.type }), file.name);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return form;
}

/** The named parts of a multipart body the upstream received. */
async function partsOf(raw: Buffer, contentType: string) {
  const form = await new Response(new Uint8Array(raw), {
    headers: { 'content-type': contentType },
  }).formData();
  return form;
}

describe('POST /v3/stt and /v3/audio on the mock', () => {
  it('transcribes base64 JSON and multipart alike, priced per minute of the file, and logs it', async () => {
    const user = await signUpUser(app);
    const gate = await transcription.gate(user);
    const wav = silence(3);
    const res = await transcription.send(user, gate.id, { audio: wav.toString('base64'), language: 'fr' });
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as TranscriptAnswer;
    expect(answer).toMatchObject({
      model: 'mock/stt',
      text: 'Mock transcript of 3 seconds of audio.',
      language: 'fr',
      duration: 3,
    });
    expect(answer.segments).toEqual([{ id: 0, start: 0, end: 3, text: answer.text }]);
    expect(answer.costUsd).toBeCloseTo((3 / 60) * 0.006, 12);
    const entry = await logEntryOf(app, answer.id);
    expect(entry).toMatchObject({ endpoint: '/v3/stt', success: true });
    expect(Number(entry.costUsd)).toBeCloseTo(answer.costUsd, 10);
    expect(JSON.stringify(entry.providerRequest)).not.toContain(wav.toString('base64').slice(0, 60));

    const form = multipart(
      { gateId: gate.id, responseFormat: 'srt' },
      { data: wav, name: 'a.wav', type: 'audio/wav' },
    );
    const viaForm = await app.request('/v3/stt', { method: 'POST', headers: user.auth, body: form });
    expect(viaForm.status, await viaForm.clone().text()).toBe(200);
    const formAnswer = (await viaForm.json()) as TranscriptAnswer & { srt: string };
    expect(formAnswer.text).toBe('Mock transcript of 3 seconds of audio.');
    expect(formAnswer.srt).toBe(`1\n00:00:00,000 --> 00:00:03,000\n${formAnswer.text}\n\n`);
  });

  it('translates on an audio gate; a transcribe-only model cannot serve one', async () => {
    const user = await signUpUser(app);
    const gate = await translation.gate(user);
    const res = await translation.send(user, gate.id, { audio: silence(1.5).toString('base64') });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as TranscriptAnswer).text).toBe(
      'Mock English translation of 1.5 seconds of audio.',
    );
    expect(findModel('openai/gpt-4o-transcribe')?.taskTypes).toEqual(['stt']);
    expect(findModel('openai/whisper-1')?.taskTypes).toEqual(['stt', 'audio']);
  });

  it('falls back from a failing model to the next (directives ride in the prompt)', async () => {
    const user = await signUpUser(app);
    upstream.reply({ type: 'json', body: { text: 'hello', language: 'english', duration: 1 } });
    await expectFallsBack(app, user, transcription, {
      fallback: 'whisper-1',
      to: 'openai/whisper-1',
      data: (fail) => ({ audio: silence(1).toString('base64'), prompt: fail }),
    });
  });

  it('holds a block limit under 50 concurrent requests: no overshoot, one log entry each', async () => {
    const user = await signUpUser(app);
    const audio = silence(2).toString('base64');
    const worst = transcriptionKind.worstCase(['mock/stt'], {
      audio: Buffer.alloc(0),
      mimeType: 'audio/wav',
      filename: 'a.wav',
      seconds: 2,
      statedSeconds: 2,
      translate: false,
    });
    expect(worst).toBeCloseTo((2 / 60) * 0.006, 14);
    await expectBlockLimitHolds(app, user, {
      worst,
      fits: 7,
      route: transcription,
      data: { audio },
    });
  });

  it('refuses a file that is not audio naming the field, and a gate of another type', async () => {
    const user = await signUpUser(app);
    const gate = await transcription.gate(user);
    const notAudio = Buffer.from('this is plainly a text file, not audio at all');
    await expectFieldIssues(
      (data) => transcription.send(user, gate.id, data),
      [
        [{}, 'data.audio'],
        [{ audio: notAudio.toString('base64') }, 'data.audio'],
        [{ audio: 'not base64!!' }, 'data.audio'],
        [{ audio: silence(1).toString('base64'), temperature: 3 }, 'data.temperature'],
      ],
    );
    const form = multipart({ gateId: gate.id }, { data: notAudio, name: 'a.wav', type: 'audio/wav' });
    const res = await app.request('/v3/stt', { method: 'POST', headers: user.auth, body: form });
    expect(res.status).toBe(400);
    expect(((await res.json()) as NativeError).error.details?.issues?.[0]?.path).toBe('file');

    const ttsOnly = await speech.gate(user);
    await expectRefused(
      await transcription.send(user, ttsOnly.id, { audio: silence(1).toString('base64') }),
      'transcription requests need a stt gate',
    );
    const sttOnly = await translation.send(user, gate.id, { audio: silence(1).toString('base64') });
    expect(sttOnly.status).toBe(400);
  });
});

describe('transcription providers and OpenAI’s /v1/audio routes', () => {
  it('sends OpenAI a multipart transcription and answers verbose_json, srt and text in OpenAI’s shapes', async () => {
    const user = await signUpUser(app);
    const gate = await transcription.gate(user, { model: 'whisper-1' });
    const wav = silence(2);
    const verbose = {
      task: 'transcribe',
      language: 'english',
      duration: 2,
      text: 'Hello world.',
      segments: [{ id: 0, seek: 0, start: 0, end: 1.5, text: ' Hello world.' }],
    };
    upstream.reply(
      { type: 'json', body: verbose },
      { type: 'json', body: verbose },
      { type: 'json', body: verbose },
    );
    const send = (fields: Record<string, string>) =>
      app.request('/v1/audio/transcriptions', {
        method: 'POST',
        headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
        body: multipart(
          { model: 'whisper-1', ...fields },
          { data: wav, name: 'clip.wav', type: 'audio/wav' },
        ),
      });
    const res = await send({
      response_format: 'verbose_json',
      language: 'en',
      prompt: 'greeting',
      temperature: '0.2',
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { task: string; duration: number; text: string; segments: unknown[] };
    expect(body).toMatchObject({
      task: 'transcribe',
      language: 'english',
      duration: 2,
      text: 'Hello world.',
    });
    expect(body.segments[0]).toMatchObject({ id: 0, start: 0, end: 1.5, text: ' Hello world.' });
    const request = upstream.last();
    expect(request.path).toBe('/v1/audio/transcriptions');
    expect(request.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const parts = await partsOf(request.raw, String(request.headers['content-type']));
    expect(parts.get('model')).toBe('whisper-1');
    expect(parts.get('response_format')).toBe('verbose_json');
    expect(parts.get('language')).toBe('en');
    expect(parts.get('prompt')).toBe('greeting');
    expect(parts.get('temperature')).toBe('0.2');
    const file = parts.get('file') as File;
    expect(file.name).toBe('clip.wav');
    expect(file.type).toBe('audio/wav');
    expect(Buffer.from(await file.arrayBuffer())).toEqual(wav);

    const srt = await send({ response_format: 'srt' });
    expect(srt.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await srt.text()).toBe('1\n00:00:00,000 --> 00:00:01,500\nHello world.\n\n');
    const text = await send({ response_format: 'text' });
    expect(await text.text()).toBe('Hello world.\n');
  });

  it('sends gpt-4o-transcribe plain json and answers OpenAI’s {text, usage}', async () => {
    const user = await signUpUser(app);
    const gate = await transcription.gate(user, { model: 'gpt-4o-mini-transcribe' });
    upstream.reply({ type: 'json', body: { text: 'Bonjour.', usage: { type: 'duration', seconds: 1 } } });
    const res = await app.request('/v1/audio/transcriptions', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      body: multipart({ model: gate.id }, { data: silence(1), name: 'b.wav', type: 'audio/wav' }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toEqual({ text: 'Bonjour.', usage: { type: 'duration', seconds: 1 } });
    const parts = await partsOf(upstream.last().raw, String(upstream.last().headers['content-type']));
    expect(parts.get('response_format')).toBe('json');
    expect(parts.get('model')).toBe('gpt-4o-mini-transcribe');
    const cost = Number(res.headers.get('x-gatehouse-cost-usd'));
    expect(cost).toBeCloseTo((1 / 60) * 0.003, 12);
  });

  it('translates through Groq’s /audio/translations, with no language sent', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { taskType: 'audio', model: 'groq/whisper-large-v3' });
    upstream.reply({
      type: 'json',
      body: { task: 'translate', language: 'english', duration: 4, text: 'Good morning.', segments: [] },
    });
    const res = await app.request('/v1/audio/translations', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      body: multipart({ model: gate.id }, { data: silence(4), name: 'c.wav', type: 'audio/wav' }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toEqual({ text: 'Good morning.' });
    expect(upstream.last().path).toBe('/groq/openai/v1/audio/translations');
    const parts = await partsOf(upstream.last().raw, String(upstream.last().headers['content-type']));
    expect(parts.get('language')).toBeNull();
    expect(Number(res.headers.get('x-gatehouse-cost-usd'))).toBeCloseTo((4 / 60) * (0.111 / 60), 12);
  });

  it('reads parts named __proto__, fields, file or multipart as ordinary parts', async () => {
    const user = await signUpUser(app);
    const gate = await transcription.gate(user);
    const headers = { ...user.auth, 'x-gatehouse-gate-id': gate.id };
    const res = await app.request('/v1/audio/transcriptions', {
      method: 'POST',
      headers,
      body: multipart(
        { model: 'mock/stt', ['__proto__']: 'x', fields: 'x', file: 'not the audio', multipart: 'no' },
        { data: silence(2), name: 'a.wav', type: 'audio/wav' },
      ),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toEqual({
      text: 'Mock transcript of 2 seconds of audio.',
      usage: { type: 'duration', seconds: 2 },
    });

    // A file part named __proto__ is no `file`: refused as missing, not made the parts' prototype.
    const form = multipart({ model: 'mock/stt' });
    form.append('__proto__', new Blob([new Uint8Array(silence(1))], { type: 'audio/wav' }), 'p.wav');
    const misnamed = await app.request('/v1/audio/transcriptions', { method: 'POST', headers, body: form });
    expect(misnamed.status).toBe(400);
    expect(((await misnamed.json()) as { error: { param: string } }).error.param).toBe('file');

    // The native route names a field it does not know, __proto__ as any other.
    const native = await app.request('/v3/stt', {
      method: 'POST',
      headers: user.auth,
      body: multipart(
        { gateId: gate.id, ['__proto__']: 'x' },
        { data: silence(1), name: 'a.wav', type: 'audio/wav' },
      ),
    });
    expect(native.status).toBe(400);
    expect(await native.text()).toContain('__proto__');
  });

  it('refuses in OpenAI’s shape: a file that is not audio, and no file', async () => {
    const user = await signUpUser(app);
    const gate = await transcription.gate(user);
    const headers = { ...user.auth, 'x-gatehouse-gate-id': gate.id };
    const notAudio = await app.request('/v1/audio/transcriptions', {
      method: 'POST',
      headers,
      body: multipart(
        { model: 'mock/stt' },
        { data: Buffer.from('{"not":"audio"}'), name: 'x.mp3', type: 'audio/mpeg' },
      ),
    });
    expect(notAudio.status).toBe(400);
    expect(((await notAudio.json()) as { error: { param: string } }).error.param).toBe('file');
    const none = await app.request('/v1/audio/transcriptions', {
      method: 'POST',
      headers,
      body: multipart({ model: 'mock/stt' }),
    });
    expect(none.status).toBe(400);
    expect(((await none.json()) as { error: { param: string } }).error.param).toBe('file');
  });
});
