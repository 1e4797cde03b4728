/**
 * Embeddings through gates, end to end: POST /v3/embeddings and OpenAI's /v1/embeddings, on the
 * mock and on local servers speaking OpenAI's, Mistral's and Gemini's embedding APIs; fallback,
 * an exact block limit under concurrency, one log entry per request, bad input.
 */
import { describe, expect, it } from 'vitest';
import { embeddingsKind } from '../src/dataplane/tasks/embeddings.ts';
import { findModel } from '../src/domain/catalog.ts';
import { useTestApp } from './support/app.ts';
import { attemptsOf, type LoggedAttempt, logEntryOf, type OpenAIError } from './support/chat.ts';
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

// One local server answers as OpenAI (/v1/embeddings), Mistral (/mistral/v1/embeddings) and
// Gemini (/v1beta/models/M:batchEmbedContents), each checking its key as the real one does.
const upstream = await useUpstream({
  serves: (path) =>
    /^\/v1beta\/models\/[^/:]+:batchEmbedContents$/.test(path) || /^(\/mistral)?\/v1\/embeddings$/.test(path),
  keyOk: (request) =>
    request.path.startsWith('/v1beta/')
      ? hasGoogleKey(request, 'g-key')
      : hasBearer(request, request.path.startsWith('/mistral') ? 'm-key' : 'sk-test'),
});
const app = useTestApp({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${upstream.url}/v1`,
  MISTRAL_API_KEY: 'm-key',
  MISTRAL_BASE_URL: `${upstream.url}/mistral`,
  GEMINI_API_KEY: 'g-key',
  GEMINI_BASE_URL: upstream.url,
});

type EmbeddingsAnswer = {
  id: string;
  model: string;
  embeddings: number[][];
  dimensions: number;
  usage: { promptTokens: number; totalTokens: number; estimated?: boolean };
  costUsd: number;
  latencyMs: number;
};

const embeddings = taskRoute(app, '/v3/embeddings', { taskType: 'embeddings', model: 'mock/embed' });

const norm = (v: number[]) => Math.hypot(...v);

describe('POST /v3/embeddings on the mock', () => {
  it('answers one unit vector per input, deterministic, of the requested dimensions, and logs it', async () => {
    const user = await signUpUser(app);
    const gate = await embeddings.gate(user);
    const res = await embeddings.send(user, gate.id, { input: ['hello world', 'another text'] });
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as EmbeddingsAnswer;
    expect(answer.model).toBe('mock/embed');
    expect(answer.embeddings).toHaveLength(2);
    expect(answer.dimensions).toBe(1536);
    for (const v of answer.embeddings) expect(norm(v)).toBeCloseTo(1, 6);
    expect(answer.embeddings[0]).not.toEqual(answer.embeddings[1]);

    const again = (await (
      await embeddings.send(user, gate.id, { input: 'hello world', dimensions: 64 })
    ).json()) as EmbeddingsAnswer;
    expect(again.dimensions).toBe(64);
    expect(again.embeddings[0]).toHaveLength(64);

    const price = findModel('mock/embed')?.inputPricePerMTok ?? Number.NaN;
    expect(answer.usage.promptTokens).toBeGreaterThan(0);
    expect(answer.costUsd).toBeCloseTo((answer.usage.promptTokens * price) / 1e6, 12);
    const entry = await logEntryOf(app, answer.id);
    expect(entry).toMatchObject({ endpoint: '/v3/embeddings', success: true, modelUsed: 'mock/embed' });
    expect(Number(entry.costUsd)).toBeCloseTo(answer.costUsd, 8);
    expect(entry.promptTokens).toBe(answer.usage.promptTokens);
  });

  it('falls back from a failing model to the next, recording both attempts', async () => {
    const user = await signUpUser(app);
    const answer = await expectFallsBack<EmbeddingsAnswer>(app, user, embeddings, {
      fallback: 'mock/embed-large',
      data: (fail) => ({ input: `x ${fail}` }),
    });
    expect(answer.dimensions).toBe(3072);
  });

  it('says when a fallback answers in other dimensions than the primary gives, in a header and the log', async () => {
    const user = await signUpUser(app);
    const gate = await embeddings.gate(user, {
      routingStrategy: 'fallback',
      fallbackModels: ['mock/embed-large'],
    });
    const fail = '[mock:fail=503@mock/embed]';
    const res = await embeddings.send(user, gate.id, { input: `shape ${fail}` });
    expect(res.status, await res.clone().text()).toBe(200);
    // mock/embed gives 1,536; mock/embed-large answered with 3,072.
    expect(res.headers.get('x-gatehouse-shape-changed')).toBe('dimensions 1536 -> 3072');
    const answer = (await res.json()) as EmbeddingsAnswer;
    expect(answer).toMatchObject({ model: 'mock/embed-large', dimensions: 3072 });
    const entry = await logEntryOf(app, answer.id);
    expect(attemptsOf(entry).map((a) => [a.model, a.ok, a.dimensions, a.shapeNote])).toEqual([
      ['mock/embed', false, undefined, undefined],
      ['mock/embed-large', true, 3072, 'dimensions 1536 -> 3072'],
    ]);
    // The entry as GET /v1/logs/:id shows it.
    const logged = (await (await app.request(`/v1/logs/${answer.id}`, { headers: user.auth })).json()) as {
      attempts: LoggedAttempt[];
    };
    expect(logged.attempts.at(-1)?.shapeNote).toBe('dimensions 1536 -> 3072');

    // The OpenAI drop-in says it the same way; the primary's length is the `dimensions` asked for.
    const v1 = await app.request('/v1/embeddings', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      json: { model: gate.id, input: `shape ${fail}` },
    });
    expect(v1.status, await v1.clone().text()).toBe(200);
    expect(v1.headers.get('x-gatehouse-shape-changed')).toBe('dimensions 1536 -> 3072');
  });

  it('notes nothing when the fallback answers in the primary’s dimensions, or the primary answers', async () => {
    const user = await signUpUser(app);
    const gate = await embeddings.gate(user, {
      routingStrategy: 'fallback',
      fallbackModels: ['mock/embed-large'],
    });
    // Both models shorten their vectors to the 256 asked for: the same shape.
    const fellBack = await embeddings.send(user, gate.id, {
      input: 'same [mock:fail=503@mock/embed]',
      dimensions: 256,
    });
    expect(fellBack.status, await fellBack.clone().text()).toBe(200);
    expect(fellBack.headers.get('x-gatehouse-shape-changed')).toBeNull();
    const answer = (await fellBack.json()) as EmbeddingsAnswer;
    expect(answer).toMatchObject({ model: 'mock/embed-large', dimensions: 256 });
    const entry = await logEntryOf(app, answer.id);
    expect(attemptsOf(entry).map((a) => [a.model, a.ok, a.dimensions, a.shapeNote])).toEqual([
      ['mock/embed', false, undefined, undefined],
      ['mock/embed-large', true, 256, undefined],
    ]);

    const primary = await embeddings.send(user, gate.id, { input: 'no fallback' });
    expect(primary.status).toBe(200);
    expect(primary.headers.get('x-gatehouse-shape-changed')).toBeNull();
    const direct = (await primary.json()) as EmbeddingsAnswer;
    expect(attemptsOf(await logEntryOf(app, direct.id)).map((a) => [a.dimensions, a.shapeNote])).toEqual([
      [1536, undefined],
    ]);
  });

  it('holds a block limit under 50 concurrent requests: no overshoot, one log entry each', async () => {
    const user = await signUpUser(app);
    const input = 'the same text, embedded many times over';
    const worst = embeddingsKind.worstCase(['mock/embed'], { input: [input] });
    expect(worst).toBeGreaterThan(0);
    await expectBlockLimitHolds(app, user, {
      worst,
      fits: 7,
      route: embeddings,
      data: { input },
    });
  });

  it('refuses bad input with a 400 naming the field, and a gate of another type', async () => {
    const user = await signUpUser(app);
    const gate = await embeddings.gate(user);
    await expectFieldIssues(
      (data) => embeddings.send(user, gate.id, data),
      [
        [{}, 'data.input'],
        [{ input: '' }, 'data.input'],
        [{ input: [] }, 'data.input'],
        [{ input: 'x', dimensions: 0 }, 'data.dimensions'],
        [{ input: 'x', colour: 'red' }, 'data.colour'],
      ],
    );
    const chatGate = await createGate(app, user, { model: 'mock/echo' });
    await expectRefused(
      await embeddings.send(user, chatGate.id, { input: 'x' }),
      'embeddings requests need an embeddings gate',
    );
  });
});

describe('providers', () => {
  it('speaks OpenAI’s /embeddings and prices the tokens it reports', async () => {
    const user = await signUpUser(app);
    const gate = await embeddings.gate(user, { model: 'text-embedding-3-small' });
    expect(gate.model).toBe('openai/text-embedding-3-small');
    upstream.reply({
      type: 'json',
      body: {
        object: 'list',
        data: [
          { object: 'embedding', index: 1, embedding: [0, 1] },
          { object: 'embedding', index: 0, embedding: [1, 0] },
        ],
        model: 'text-embedding-3-small',
        usage: { prompt_tokens: 9, total_tokens: 9 },
      },
    });
    const res = await embeddings.send(user, gate.id, { input: ['a', 'b'], dimensions: 2 });
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as EmbeddingsAnswer;
    expect(upstream.last().body).toEqual({
      model: 'text-embedding-3-small',
      input: ['a', 'b'],
      encoding_format: 'float',
      dimensions: 2,
    });
    expect(answer.embeddings).toEqual([
      [1, 0],
      [0, 1],
    ]);
    expect(answer.usage).toEqual({ promptTokens: 9, totalTokens: 9 });
    expect(answer.costUsd).toBeCloseTo((9 * 0.02) / 1e6, 14);
  });

  it('knows a real model’s default length: text-embedding-3-large failing over to mistral-embed is noted', async () => {
    const user = await signUpUser(app);
    const gate = await embeddings.gate(user, {
      model: 'text-embedding-3-large',
      routingStrategy: 'fallback',
      fallbackModels: ['mistral/mistral-embed'],
    });
    const vector = Array.from({ length: 1024 }, (_, i) => (i === 0 ? 1 : 0));
    upstream.reply(
      { type: 'json', status: 503, body: { error: { message: 'overloaded', type: 'server_error' } } },
      {
        type: 'json',
        body: {
          object: 'list',
          data: [{ object: 'embedding', index: 0, embedding: vector }],
          model: 'mistral-embed',
          usage: { prompt_tokens: 2, total_tokens: 2 },
        },
      },
    );
    const res = await embeddings.send(user, gate.id, { input: 'hello' });
    expect(res.status, await res.clone().text()).toBe(200);
    // text-embedding-3-large gives 3,072 numbers; mistral-embed answered with 1,024.
    expect(res.headers.get('x-gatehouse-shape-changed')).toBe('dimensions 3072 -> 1024');
    const answer = (await res.json()) as EmbeddingsAnswer;
    expect(answer).toMatchObject({ model: 'mistral/mistral-embed', dimensions: 1024 });
    expect(attemptsOf(await logEntryOf(app, answer.id)).at(-1)?.shapeNote).toBe('dimensions 3072 -> 1024');
  });

  it('speaks Mistral’s /v1/embeddings', async () => {
    const user = await signUpUser(app);
    const gate = await embeddings.gate(user, { model: 'mistral-embed' });
    upstream.reply({
      type: 'json',
      body: {
        id: 'emb-1',
        object: 'list',
        data: [{ object: 'embedding', index: 0, embedding: [0.6, 0.8] }],
        model: 'mistral-embed',
        usage: { prompt_tokens: 3, total_tokens: 3, completion_tokens: 0 },
      },
    });
    const answer = (await (
      await embeddings.send(user, gate.id, { input: 'bonjour' })
    ).json()) as EmbeddingsAnswer;
    expect(upstream.last().path).toBe('/mistral/v1/embeddings');
    expect(answer.embeddings).toEqual([[0.6, 0.8]]);
  });

  it('speaks Gemini’s batchEmbedContents, counting the tokens it does not report', async () => {
    const user = await signUpUser(app);
    const gate = await embeddings.gate(user, { model: 'gemini-embedding-001' });
    upstream.reply({ type: 'json', body: { embeddings: [{ values: [0.1, 0.2] }, { values: [0.3, 0.4] }] } });
    const res = await embeddings.send(user, gate.id, { input: ['one', 'two'], dimensions: 2 });
    const answer = (await res.json()) as EmbeddingsAnswer;
    expect(upstream.last().path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(upstream.last().body).toEqual({
      requests: [
        {
          model: 'models/gemini-embedding-001',
          content: { parts: [{ text: 'one' }] },
          outputDimensionality: 2,
        },
        {
          model: 'models/gemini-embedding-001',
          content: { parts: [{ text: 'two' }] },
          outputDimensionality: 2,
        },
      ],
    });
    expect(answer.embeddings).toEqual([
      [0.1, 0.2],
      [0.3, 0.4],
    ]);
    expect(answer.usage).toMatchObject({ estimated: true });
    expect(answer.usage.promptTokens).toBeGreaterThan(0);
  });
});

describe('POST /v1/embeddings (OpenAI-compatible)', () => {
  it('answers OpenAI’s list, in floats or base64 float32s', async () => {
    const user = await signUpUser(app);
    const gate = await embeddings.gate(user);
    const headers = { ...user.auth, 'x-gatehouse-gate-id': gate.id };
    const res = await app.request('/v1/embeddings', {
      method: 'POST',
      headers,
      json: { model: 'mock/embed', input: 'hello', dimensions: 8 },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const floats = (await res.json()) as {
      object: string;
      data: { object: string; index: number; embedding: number[] }[];
      model: string;
      usage: { prompt_tokens: number; total_tokens: number };
    };
    expect(floats.object).toBe('list');
    expect(floats.data[0]?.embedding).toHaveLength(8);

    const b64 = (await (
      await app.request('/v1/embeddings', {
        method: 'POST',
        headers,
        json: { model: gate.id, input: 'hello', dimensions: 8, encoding_format: 'base64' },
      })
    ).json()) as { data: { embedding: string }[] };
    const bytes = Buffer.from(b64.data[0]?.embedding ?? '', 'base64');
    const decoded = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
    expect(decoded).toHaveLength(8);
    for (const [i, v] of decoded.entries()) {
      expect(v).toBeCloseTo(floats.data[0]?.embedding[i] ?? Number.NaN, 6);
    }
  });

  it('answers errors in OpenAI’s shape', async () => {
    const user = await signUpUser(app);
    const gate = await embeddings.gate(user);
    const res = await app.request('/v1/embeddings', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      json: { model: 'mock/embed' },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as OpenAIError).error).toMatchObject({
      type: 'invalid_request_error',
      param: 'input',
    });
  });
});
