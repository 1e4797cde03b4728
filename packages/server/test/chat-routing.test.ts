import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import {
  answerOf,
  attemptsOf,
  chat,
  completions,
  logEntriesOf,
  logEntryOf,
  type NativeError,
  type OpenAIError,
  say,
} from './support/chat.ts';
import { createGate, signUpUser } from './support/factories.ts';

// Short, so that a model that never answers costs a test a fraction of a second.
const app = useTestApp({ GATEHOUSE_ATTEMPT_TIMEOUT_MS: '300' });

const fallbackGate = { routingStrategy: 'fallback', model: 'mock/echo', fallbackModels: ['mock/fast'] };

async function failed(res: Response, status: number, code: string) {
  expect(res.status, await res.clone().text()).toBe(status);
  const body = (await res.json()) as NativeError;
  expect(body.error.code).toBe(code);
  return body;
}

describe('single routing', () => {
  it('answers 502 upstream_error after one attempt when the primary fails with 503', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { routingStrategy: 'single', fallbackModels: ['mock/fast'] });
    const res = await chat(app, user, gate.id, { messages: say('[mock:fail=503] hi') });
    const body = await failed(res, 502, 'upstream_error');
    expect(body.error.message).toMatch(/mock\/echo/);
    const [entry, ...others] = await logEntriesOf(app, gate.id);
    expect(others).toHaveLength(0);
    expect(entry).toMatchObject({
      success: false,
      statusCode: 502,
      errorCode: 'upstream_error',
      modelUsed: null,
    });
    expect(entry?.errorMessage).toMatch(/503/);
    expect(attemptsOf(entry as never)).toEqual([
      expect.objectContaining({ model: 'mock/echo', provider: 'mock', ok: false, status: 503 }),
    ]);
  });

  it('answers in the OpenAI error shape with 502 on the compatible endpoint', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await completions(app, user, gate.id, { messages: say('[mock:fail=500] hi') });
    expect(res.status).toBe(502);
    expect(((await res.json()) as OpenAIError).error).toMatchObject({
      type: 'api_error',
      code: 'upstream_error',
      param: null,
    });
  });
});

describe('fallback routing', () => {
  it('answers from the first fallback when the primary fails with 503, recording both attempts', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, fallbackGate);
    const res = await chat(app, user, gate.id, { messages: say('[mock:fail=503@mock/echo] hi') });
    expect(res.headers.get('x-gatehouse-model-used')).toBe('mock/fast');
    const answer = await answerOf(res);
    expect(answer).toMatchObject({ model: 'mock/fast', content: 'OK', finishReason: 'stop' });
    const entry = await logEntryOf(app, answer.id);
    expect(entry).toMatchObject({ success: true, modelRequested: 'mock/echo', modelUsed: 'mock/fast' });
    expect(attemptsOf(entry)).toEqual([
      expect.objectContaining({ model: 'mock/echo', ok: false, status: 503 }),
      expect.objectContaining({ model: 'mock/fast', ok: true, status: 200, error: null }),
    ]);
  });

  it('tries the fallbacks in list order', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      routingStrategy: 'fallback',
      model: 'mock/echo',
      fallbackModels: ['mock/smart', 'mock/fast'],
    });
    const res = await chat(app, user, gate.id, { messages: say('[mock:fail=500] hi') });
    await failed(res, 502, 'upstream_error');
    const [entry] = await logEntriesOf(app, gate.id);
    expect(attemptsOf(entry as never).map((a) => a.model)).toEqual(['mock/echo', 'mock/smart', 'mock/fast']);
  });

  it.each([408, 429, 500, 502])('falls back when the primary answers %i', async (status) => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, fallbackGate);
    const res = await chat(app, user, gate.id, { messages: say(`[mock:fail=${status}@mock/echo] hi`) });
    expect((await answerOf(res)).model).toBe('mock/fast');
  });

  it('falls back from a provider that is not configured', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      routingStrategy: 'fallback',
      model: 'openai/gpt-4o-mini',
      fallbackModels: ['mock/echo'],
    });
    const answer = await answerOf(await chat(app, user, gate.id, { messages: say('hi') }));
    expect(answer).toMatchObject({ model: 'mock/echo', content: 'Echo: hi' });
    const entry = await logEntryOf(app, answer.id);
    expect(attemptsOf(entry)[0]).toMatchObject({
      model: 'openai/gpt-4o-mini',
      provider: 'openai',
      ok: false,
    });
    expect(attemptsOf(entry)[0]?.error).toMatch(/not configured/);
  });

  it.each([400, 401, 403, 404, 422])(
    'never falls back when the primary answers %i (the caller would only repeat it)',
    async (status) => {
      const user = await signUpUser(app);
      const gate = await createGate(app, user, fallbackGate);
      const res = await chat(app, user, gate.id, { messages: say(`[mock:fail=${status}@mock/echo] hi`) });
      expect(res.status).not.toBe(200);
      const [entry] = await logEntriesOf(app, gate.id);
      expect(entry?.success).toBe(false);
      expect(attemptsOf(entry as never)).toEqual([expect.objectContaining({ model: 'mock/echo', status })]);
    },
  );

  it('answers a primary 400 as the caller own 400', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, fallbackGate);
    const res = await chat(app, user, gate.id, { messages: say('[mock:fail=400@mock/echo] hi') });
    await failed(res, 400, 'invalid_request');
  });

  it('never falls back on a content-policy refusal', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, fallbackGate);
    const res = await chat(app, user, gate.id, { messages: say('[mock:refuse] something') });
    const body = await failed(res, 400, 'invalid_request');
    expect(body.error.message).toMatch(/content policy/);
    const [entry] = await logEntriesOf(app, gate.id);
    expect(entry).toMatchObject({ success: false, statusCode: 400 });
    expect(attemptsOf(entry as never)).toEqual([expect.objectContaining({ model: 'mock/echo', ok: false })]);
  });

  it('falls back when the primary does not answer within the attempt timeout', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, fallbackGate);
    const t0 = performance.now();
    const answer = await answerOf(
      await chat(app, user, gate.id, { messages: say('[mock:timeout@mock/echo] hi') }),
    );
    expect(answer.model).toBe('mock/fast');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
    const entry = await logEntryOf(app, answer.id);
    const [timedOut, answered] = attemptsOf(entry);
    expect(timedOut).toMatchObject({ model: 'mock/echo', ok: false, status: null });
    expect(timedOut?.latencyMs).toBeGreaterThanOrEqual(290);
    expect(answered).toMatchObject({ model: 'mock/fast', ok: true });
  });

  it('answers 504 upstream_timeout when every model times out', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, fallbackGate);
    const res = await chat(app, user, gate.id, { messages: say('[mock:timeout] hi') });
    await failed(res, 504, 'upstream_timeout');
    const [entry] = await logEntriesOf(app, gate.id);
    expect(entry).toMatchObject({ success: false, statusCode: 504, errorCode: 'upstream_timeout' });
    expect(attemptsOf(entry as never).map((a) => [a.model, a.ok])).toEqual([
      ['mock/echo', false],
      ['mock/fast', false],
    ]);
  });

  it('answers 429 rate_limited when every model is rate-limited', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, fallbackGate);
    const res = await chat(app, user, gate.id, { messages: say('[mock:fail=429] hi') });
    await failed(res, 429, 'rate_limited');
  });
});

describe('round-robin routing', () => {
  it('spreads requests over the primary and every fallback', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      routingStrategy: 'round-robin',
      model: 'mock/echo',
      fallbackModels: ['mock/fast', 'mock/smart'],
    });
    const models = await Promise.all(
      Array.from({ length: 60 }, async () => (await answerOf(await chat(app, user, gate.id))).model),
    );
    const counts = Object.fromEntries(['mock/echo', 'mock/fast', 'mock/smart'].map((m) => [m, 0]));
    for (const m of models) counts[m] = (counts[m] ?? 0) + 1;
    // Each model is the first pick with probability 1/3; missing one in 60 draws is ~1e-10.
    for (const [model, count] of Object.entries(counts)) expect(count, model).toBeGreaterThan(0);
    expect(Object.keys(counts)).toHaveLength(3);
    const entries = await logEntriesOf(app, gate.id);
    expect(entries).toHaveLength(60);
    for (const entry of entries) expect(attemptsOf(entry)).toHaveLength(1);
  });

  it('moves on to the others when its random pick fails', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      routingStrategy: 'round-robin',
      model: 'mock/echo',
      fallbackModels: ['mock/fast'],
    });
    const answers = await Promise.all(
      Array.from({ length: 30 }, async () =>
        answerOf(await chat(app, user, gate.id, { messages: say('[mock:fail=503@mock/echo] hi') })),
      ),
    );
    for (const answer of answers) expect(answer.model).toBe('mock/fast');
    const entries = await logEntriesOf(app, gate.id);
    const firstPicks = entries.map((e) => attemptsOf(e)[0]?.model);
    // The failing primary was picked first about half the time (never in 30: ~1e-9), then fast.
    expect(firstPicks).toContain('mock/echo');
    expect(firstPicks).toContain('mock/fast');
    for (const entry of entries) {
      const attempts = attemptsOf(entry);
      expect(attempts.at(-1)).toMatchObject({ model: 'mock/fast', ok: true });
      if (attempts[0]?.model === 'mock/echo') expect(attempts).toHaveLength(2);
    }
  });
});
