import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import {
  answerOf,
  chat,
  completions,
  logEntryOf,
  type NativeError,
  type OpenAIError,
  say,
} from './support/chat.ts';
import { createGate, signUpUser } from './support/factories.ts';

const app = useTestApp();

type SentRequest = {
  model: string;
  messages: { role: string; content: unknown }[];
  temperature?: number;
  maxTokens?: number;
  topP?: number;
};

const CLIENT_OVERRIDES = { model: 'mock/fast', temperature: 1.5, maxTokens: 20, topP: 0.5 };

async function sentFor(res: Response) {
  const answer = await answerOf(res);
  const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
  expect(entry.id).toBe(answer.id);
  return { answer, entry, sent: entry.providerRequest as SentRequest };
}

describe('the gate merge', () => {
  it('prepends the gate system prompt to what the provider receives', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { systemPrompt: 'You answer in haiku.' });
    const { sent, answer } = await sentFor(
      await chat(app, user, gate.id, {
        messages: [
          { role: 'system', content: 'Client system note.' },
          { role: 'user', content: 'hi there' },
        ],
      }),
    );
    expect(sent.messages).toEqual([
      { role: 'system', content: 'You answer in haiku.' },
      { role: 'system', content: 'Client system note.' },
      { role: 'user', content: 'hi there' },
    ]);
    expect(answer.content).toBe('Echo: hi there');
  });

  it('sends the client messages unchanged through a gate without a system prompt', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const { sent } = await sentFor(await chat(app, user, gate.id, { messages: say('plain') }));
    expect(sent.messages).toEqual([{ role: 'user', content: 'plain' }]);
  });

  it('applies the gate temperature, maxTokens and topP when the client sends none', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { temperature: 0.3, maxTokens: 50, topP: 0.9 });
    const { sent, entry } = await sentFor(await chat(app, user, gate.id));
    expect(sent).toMatchObject({ model: 'echo', temperature: 0.3, maxTokens: 50, topP: 0.9 });
    expect(entry.ignoredOverrides).toEqual([]);
  });

  it('honours every client override when allowOverrides is true', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      temperature: 0.3,
      maxTokens: 50,
      topP: 0.9,
      allowOverrides: true,
    });
    const res = await chat(app, user, gate.id, CLIENT_OVERRIDES);
    expect(res.headers.get('x-gatehouse-ignored-overrides')).toBeNull();
    expect(res.headers.get('x-gatehouse-model-used')).toBe('mock/fast');
    const { sent, entry, answer } = await sentFor(res);
    expect(answer).toMatchObject({ model: 'mock/fast', content: 'OK' });
    expect(sent).toMatchObject({ model: 'fast', temperature: 1.5, maxTokens: 20, topP: 0.5 });
    expect(entry).toMatchObject({
      modelRequested: 'mock/fast',
      modelUsed: 'mock/fast',
      ignoredOverrides: [],
    });
  });

  it('honours only the fields a per-field allowOverrides permits, and names the refused ones', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      temperature: 0.3,
      maxTokens: 50,
      topP: 0.9,
      allowOverrides: { temperature: true, topP: true, maxTokens: false },
    });
    const res = await chat(app, user, gate.id, CLIENT_OVERRIDES);
    expect(res.headers.get('x-gatehouse-ignored-overrides')?.split(',').sort()).toEqual([
      'maxTokens',
      'model',
    ]);
    expect(res.headers.get('x-gatehouse-model-used')).toBe('mock/echo');
    const { sent, entry } = await sentFor(res);
    expect(sent).toMatchObject({ model: 'echo', temperature: 1.5, maxTokens: 50, topP: 0.5 });
    expect([...entry.ignoredOverrides].sort()).toEqual(['maxTokens', 'model']);
    expect(entry.modelUsed).toBe('mock/echo');
  });

  it('ignores every client override when allowOverrides is false, and says so', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { temperature: 0.3, maxTokens: 50, topP: 0.9 });
    const res = await chat(app, user, gate.id, CLIENT_OVERRIDES);
    expect(res.headers.get('x-gatehouse-ignored-overrides')?.split(',').sort()).toEqual([
      'maxTokens',
      'model',
      'temperature',
      'topP',
    ]);
    const { sent, entry, answer } = await sentFor(res);
    expect(answer.model).toBe('mock/echo');
    expect(sent).toMatchObject({ model: 'echo', temperature: 0.3, maxTokens: 50, topP: 0.9 });
    expect([...entry.ignoredOverrides].sort()).toEqual(['maxTokens', 'model', 'temperature', 'topP']);
  });

  it('counts a client naming the gate own model as no override', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await chat(app, user, gate.id, { model: 'mock/echo' });
    expect(res.headers.get('x-gatehouse-ignored-overrides')).toBeNull();
    const { entry } = await sentFor(res);
    expect(entry.ignoredOverrides).toEqual([]);
  });

  it('reports ignored overrides from the OpenAI-compatible endpoint too', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { temperature: 0.3 });
    const res = await completions(app, user, gate.id, { model: 'mock/smart', temperature: 1, top_p: 0.2 });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-gatehouse-ignored-overrides')?.split(',').sort()).toEqual([
      'model',
      'temperature',
      'topP',
    ]);
    const body = (await res.json()) as { model: string };
    expect(body.model).toBe('mock/echo');
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect((entry.providerRequest as SentRequest).temperature).toBe(0.3);
  });

  it('rejects a permitted model override of another task type with 400, and logs it', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { allowOverrides: { model: true } });
    const res = await chat(app, user, gate.id, { model: 'mock/embed' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as NativeError;
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.details?.issues?.[0]).toMatchObject({ path: 'model' });
    expect(body.error.message).toMatch(/does not support task type "chat"/);
    await app.runtime.logs.drain();
    const entries = await app.db.prisma.logEntry.findMany({ where: { gateId: gate.id } });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ success: false, statusCode: 400, errorCode: 'invalid_request' });
    expect(entries[0]?.errorMessage).toMatch(/mock\/embed/);
  });

  it('rejects a permitted model override naming an unknown model with 400, on both endpoints', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { allowOverrides: true });
    const native = await chat(app, user, gate.id, { model: 'mock/no-such-model' });
    expect(native.status).toBe(400);
    expect(((await native.json()) as NativeError).error.message).toMatch(
      /unknown model "mock\/no-such-model"/,
    );
    const openai = await completions(app, user, gate.id, { model: 'nowhere/model-x' });
    expect(openai.status).toBe(400);
    const body = (await openai.json()) as OpenAIError;
    expect(body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_request',
      param: 'model',
    });
  });

  it('ignores, rather than rejects, an unknown model the gate does not let the client choose', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await chat(app, user, gate.id, { model: 'mock/no-such-model' });
    expect(res.headers.get('x-gatehouse-ignored-overrides')).toBe('model');
    expect((await answerOf(res)).model).toBe('mock/echo');
  });

  it.each([
    ['temperature', { temperature: 3 }],
    ['topP', { topP: -1 }],
    ['maxTokens', { maxTokens: 0 }],
  ])('rejects an out-of-range %s with 400 even when overrides are off', async (field, data) => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { allowOverrides: false });
    const res = await chat(app, user, gate.id, data);
    expect(res.status).toBe(400);
    const body = (await res.json()) as NativeError;
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.details?.issues?.map((i) => i.path)).toEqual([`data.${field}`]);
  });

  it.each([
    ['temperature', { temperature: 3 }],
    ['top_p', { top_p: -1 }],
    ['max_tokens', { max_tokens: 0 }],
  ])('rejects an out-of-range %s on the OpenAI-compatible endpoint with 400', async (field, body) => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await completions(app, user, gate.id, body);
    expect(res.status).toBe(400);
    expect(((await res.json()) as OpenAIError).error).toMatchObject({
      type: 'invalid_request_error',
      param: field,
    });
  });
});
