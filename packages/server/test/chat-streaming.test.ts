import { describe, expect, it } from 'vitest';
import { costOf } from '../src/dataplane/cost.ts';
import { useTestApp } from './support/app.ts';
import {
  attemptsOf,
  chat,
  completions,
  logEntriesOf,
  logEntryOf,
  type NativeError,
  type OpenAIError,
  say,
  sseEvents,
} from './support/chat.ts';
import { createGate, signUpUser } from './support/factories.ts';

const app = useTestApp();

const fallbackGate = { routingStrategy: 'fallback', model: 'mock/echo', fallbackModels: ['mock/fast'] };

type NativeDelta = { id: string; delta: { content?: string } };
type NativeFinal = {
  id: string;
  model: string;
  finishReason: string;
  usage: { promptTokens: number; completionTokens: number; totalTokens: number };
  costUsd: number;
  latencyMs: number;
  done: true;
};
type Chunk = {
  id: string;
  object: string;
  model: string;
  choices: { index: number; delta: { role?: string; content?: string }; finish_reason: string | null }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
};

function splitNative(events: unknown[]) {
  expect(events.at(-1)).toBe('[DONE]');
  const final = events.at(-2) as NativeFinal;
  expect(final.done).toBe(true);
  const deltas = events.slice(0, -2) as NativeDelta[];
  return { deltas, final, text: deltas.map((d) => d.delta.content ?? '').join('') };
}

describe('streaming on /v3/chat', () => {
  it('sends content deltas, then a final event with usage and cost, then [DONE]', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await chat(app, user, gate.id, { stream: true, messages: say('one two three four') });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-gatehouse-request-id');
    expect(res.headers.get('x-gatehouse-model-used')).toBe('mock/echo');
    const { deltas, final, text } = splitNative(await sseEvents(res));
    expect(deltas.length).toBeGreaterThan(1);
    for (const d of deltas) expect(d.id).toBe(requestId);
    expect(text).toBe('Echo: one two three four');
    expect(final).toMatchObject({ id: requestId, model: 'mock/echo', finishReason: 'stop' });
    expect(final.usage.totalTokens).toBe(final.usage.promptTokens + final.usage.completionTokens);
    expect(final.usage.completionTokens).toBeGreaterThan(0);
    expect(final.costUsd).toBeCloseTo(costOf('mock/echo', final.usage), 12);
    expect(final.costUsd).toBeGreaterThan(0);

    const entry = await logEntryOf(app, requestId);
    expect(entry).toMatchObject({
      stream: true,
      success: true,
      modelUsed: 'mock/echo',
      promptTokens: final.usage.promptTokens,
      completionTokens: final.usage.completionTokens,
    });
    expect(Number(entry.costUsd)).toBeCloseTo(final.costUsd, 8);
  });

  it('streams from the fallback when the primary fails before its first byte', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, fallbackGate);
    const res = await chat(app, user, gate.id, {
      stream: true,
      messages: say('[mock:fail=503@mock/echo] hi'),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gatehouse-model-used')).toBe('mock/fast');
    const { final, text } = splitNative(await sseEvents(res));
    expect(text).toBe('OK');
    expect(final.model).toBe('mock/fast');
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect(entry).toMatchObject({ stream: true, success: true, modelUsed: 'mock/fast' });
    expect(attemptsOf(entry).map((a) => [a.model, a.ok])).toEqual([
      ['mock/echo', false],
      ['mock/fast', true],
    ]);
  });

  it('answers an ordinary error, not a stream, when every model fails before the first byte', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, fallbackGate);
    const res = await chat(app, user, gate.id, { stream: true, messages: say('[mock:fail=503] hi') });
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(((await res.json()) as NativeError).error.code).toBe('upstream_error');
    const entries = await logEntriesOf(app, gate.id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ stream: true, success: false, statusCode: 502 });
  });
});

describe('streaming on /v1/chat/completions', () => {
  it('sends chat.completion.chunk deltas, a finish chunk, a usage chunk, then [DONE]', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await completions(app, user, gate.id, {
      stream: true,
      stream_options: { include_usage: true },
      messages: say('alpha beta gamma'),
    });
    expect(res.status).toBe(200);
    const events = await sseEvents(res);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1) as Chunk[];
    for (const c of chunks) {
      expect(c.object).toBe('chat.completion.chunk');
      expect(c.id).toBe(`chatcmpl-${res.headers.get('x-gatehouse-request-id')}`);
    }
    const usageChunk = chunks.at(-1) as Chunk;
    const finishChunk = chunks.at(-2) as Chunk;
    const contentChunks = chunks.slice(0, -2);
    expect(contentChunks[0]?.choices[0]?.delta.role).toBe('assistant');
    expect(contentChunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(
      'Echo: alpha beta gamma',
    );
    for (const c of contentChunks) expect(c.choices[0]?.finish_reason).toBeNull();
    expect(finishChunk.choices[0]).toMatchObject({ finish_reason: 'stop', delta: {} });
    expect(usageChunk.choices).toEqual([]);
    const usage = usageChunk.usage as NonNullable<Chunk['usage']>;
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);

    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect(entry).toMatchObject({
      stream: true,
      endpoint: '/v1/chat/completions',
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
    });
    const cost = costOf('mock/echo', {
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
    });
    expect(Number(entry.costUsd)).toBeCloseTo(cost, 8);
    expect(Number(entry.costUsd)).toBeGreaterThan(0);
  });

  it('sends no usage chunk unless include_usage asks for one', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await completions(app, user, gate.id, { stream: true });
    const chunks = (await sseEvents(res)).slice(0, -1) as Chunk[];
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
    for (const c of chunks) expect(c.usage).toBeUndefined();
  });

  it('streams from the fallback when the primary fails before its first byte', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, fallbackGate);
    const res = await completions(app, user, gate.id, {
      stream: true,
      messages: say('[mock:fail=500@mock/echo] hi'),
    });
    expect(res.status).toBe(200);
    const chunks = (await sseEvents(res)).slice(0, -1) as Chunk[];
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('OK');
    for (const c of chunks) expect(c.model).toBe('mock/fast');
  });

  it('answers an OpenAI-shaped error when every model fails before the first byte', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await completions(app, user, gate.id, { stream: true, messages: say('[mock:fail=503] hi') });
    expect(res.status).toBe(502);
    expect(((await res.json()) as OpenAIError).error).toMatchObject({
      code: 'upstream_error',
      type: 'api_error',
    });
  });
});
