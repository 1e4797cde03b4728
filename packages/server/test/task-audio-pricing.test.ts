/**
 * A transcription's price comes from facts the client cannot forge: a WAV header's stated byte
 * rate (or a codec, an absurd sample rate, a tiny first `data` chunk) never makes ten minutes
 * cost nothing. A block gate reserves the most the file can play, refuses it (402) before the
 * provider hears it where that does not fit, and charges what the provider reports.
 */
import { describe, expect, it } from 'vitest';
import { findModel } from '../src/domain/catalog.ts';
import { useTestApp } from './support/app.ts';
import { logEntryOf, type NativeError, readGate } from './support/chat.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';
import { hasBearer, useUpstream } from './support/tasks.ts';

const upstream = await useUpstream({
  serves: (path) => path === '/v1/audio/transcriptions',
  keyOk: (request) => hasBearer(request, 'sk-test-key'),
});
const app = useTestApp({ OPENAI_API_KEY: 'sk-test-key', OPENAI_BASE_URL: `${upstream.url}/v1` });

const PER_MINUTE = findModel('openai/whisper-1')?.unitPrices.perMinute ?? Number.NaN;
/** 8 kHz mono 8-bit: the slowest PCM there is, 8,000 bytes a second. */
const RATE = 8_000;

type Header = {
  formatTag?: number;
  channels?: number;
  sampleRate?: number;
  byteRate?: number;
  blockAlign?: number;
  bitsPerSample?: number;
};

/** A RIFF/WAVE file around `samples`, its `fmt ` fields as given (8 kHz mono 8-bit by default). */
function wav(samples: Buffer, header: Header = {}, dataChunks: Buffer[] = [samples]): Buffer {
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'latin1');
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(header.formatTag ?? 1, 8);
  fmt.writeUInt16LE(header.channels ?? 1, 10);
  fmt.writeUInt32LE(header.sampleRate ?? RATE, 12);
  fmt.writeUInt32LE(header.byteRate ?? RATE, 16);
  fmt.writeUInt16LE(header.blockAlign ?? 1, 20);
  fmt.writeUInt16LE(header.bitsPerSample ?? 8, 22);
  const chunks = dataChunks.map((d) => {
    const head = Buffer.alloc(8);
    head.write('data', 0, 'latin1');
    head.writeUInt32LE(d.length, 4);
    return Buffer.concat([head, d, Buffer.alloc(d.length % 2)]);
  });
  const body = Buffer.concat([fmt, ...chunks]);
  const riff = Buffer.alloc(12);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(4 + body.length, 4);
  riff.write('WAVE', 8, 'latin1');
  return Buffer.concat([riff, body]);
}

/** `seconds` of 8 kHz mono 8-bit silence (128 is silence in unsigned 8-bit PCM). */
const pcm = (seconds: number) => Buffer.alloc(seconds * RATE, 128);

const sttGate = (user: TestUser, spendingLimit: number) =>
  createGate(app, user, {
    taskType: 'stt',
    model: 'whisper-1',
    spendingLimit,
    spendingEnforcement: 'block',
  });

const transcribe = (user: TestUser, gateId: string, file: Buffer) =>
  app.request('/v3/stt', {
    method: 'POST',
    headers: user.auth,
    json: { gateId, data: { audio: file.toString('base64') } },
  });

/** OpenAI's verbose_json, reporting the seconds it heard. */
const heard = (duration: number) => ({
  type: 'json' as const,
  body: { task: 'transcribe', language: 'english', duration, text: 'Silence.', segments: [] },
});

const costOf = (seconds: number) => (seconds / 60) * PER_MINUTE;

describe('a WAV file whose header understates its length', () => {
  // Sixty seconds of audio ($0.006 on whisper-1), each file forged to look shorter.
  const minute = pcm(60);
  const forged: [string, Buffer][] = [
    ['a byte rate of 0xFFFFFFFF', wav(minute, { byteRate: 0xffffffff })],
    [
      'a byte rate of 0xFFFFFFFF and a block size to match',
      wav(minute, { byteRate: 0xffffffff, blockAlign: 0xffff }),
    ],
    [
      'a sample rate and byte rate no audio has',
      wav(minute, { sampleRate: 0xffffffff, byteRate: 0xffffffff }),
    ],
    [
      '32 channels of 32-bit samples claimed for 8-bit mono',
      wav(minute, { channels: 32, bitsPerSample: 32, byteRate: RATE * 128, blockAlign: 128 }),
    ],
    ['no channels', wav(minute, { channels: 0 })],
    [
      'a codec (MP3 in WAV) with a byte rate of 0xFFFFFFFF',
      wav(minute, { formatTag: 0x55, byteRate: 0xffffffff }),
    ],
    [
      'a first data chunk of 16 bytes, the rest in a second',
      wav(minute, {}, [minute.subarray(0, 16), minute.subarray(16)]),
    ],
  ];

  it('is refused with a 402 on a block gate whose limit its real length passes, before the provider hears it', async () => {
    expect(PER_MINUTE).toBe(0.006);
    const user = await signUpUser(app);
    for (const [what, file] of forged) {
      const gate = await sttGate(user, 0.005);
      const before = upstream.requests.length;
      const res = await transcribe(user, gate.id, file);
      expect(res.status, `${what}: ${await res.clone().text()}`).toBe(402);
      expect(((await res.json()) as NativeError).error.code).toBe('spending_limit_exceeded');
      expect(upstream.requests.length, what).toBe(before);
      expect((await readGate(app, user, gate.id)).spendingCurrent, what).toBe(0);
    }
  });

  it('is reserved at its real length where that fits, and charged the seconds the provider reports', async () => {
    const user = await signUpUser(app);
    for (const [what, file] of forged.slice(0, 2)) {
      const gate = await sttGate(user, 0.01);
      upstream.reply(heard(60));
      const res = await transcribe(user, gate.id, file);
      expect(res.status, `${what}: ${await res.clone().text()}`).toBe(200);
      const answer = (await res.json()) as { id: string; costUsd: number };
      expect(answer.costUsd, what).toBeCloseTo(costOf(60), 12);
      expect((await readGate(app, user, gate.id)).spendingCurrent, what).toBeCloseTo(costOf(60), 12);
      expect(Number((await logEntryOf(app, answer.id)).costUsd), what).toBeCloseTo(costOf(60), 10);
    }
  });

  it('is charged what the provider reports when it heard less, and never more than was reserved', async () => {
    const user = await signUpUser(app);
    const file = wav(pcm(60), { byteRate: 0xffffffff });
    const gate = await sttGate(user, 1);
    upstream.reply(heard(42), heard(3600));
    const less = await transcribe(user, gate.id, file);
    expect(less.status, await less.clone().text()).toBe(200);
    expect(((await less.json()) as { costUsd: number }).costUsd).toBeCloseTo(costOf(42), 12);
    const more = await transcribe(user, gate.id, file);
    expect(more.status, await more.clone().text()).toBe(200);
    expect(((await more.json()) as { costUsd: number }).costUsd).toBeCloseTo(costOf(60), 12);
    expect((await readGate(app, user, gate.id)).spendingCurrent).toBeCloseTo(costOf(42) + costOf(60), 12);
  });
});

describe('an honest WAV file', () => {
  it('is reserved at its own length: fifty seconds fit a limit the forged minute does not', async () => {
    const user = await signUpUser(app);
    const gate = await sttGate(user, 0.0051);
    upstream.reply(heard(50));
    const res = await transcribe(user, gate.id, wav(pcm(50)));
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as { costUsd: number; duration: number };
    expect(answer.duration).toBe(50);
    expect(answer.costUsd).toBeCloseTo(costOf(50), 12);
  });
});
