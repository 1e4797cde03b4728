/**
 * Plain model names: a user writes `gpt-4o-mini` or `claude-sonnet-4-5` as OpenAI's and
 * Anthropic's own docs do, and the gate stores and returns `openai/gpt-4o-mini`. Makers win
 * over resellers; a name only resellers serve is taken from the one configured here, and one that
 * several configured providers serve is a 400 naming the spellings to choose from.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createModelNames, findModel } from '../src/domain/catalog.ts';
import { useTestApp } from './support/app.ts';
import { answerOf, chat, completions, type NativeError, readGate } from './support/chat.ts';
import { createGate, gateInput, graphql, signUpUser } from './support/factories.ts';
import { startFakeOpenAI } from './support/upstream.ts';

const upstream = await startFakeOpenAI();
const app = useTestApp({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: upstream.url,
  // Resellers that also list Anthropic's and others' models: a plain name must not go to them.
  OPENROUTER_API_KEY: 'sk-or-test',
  GROQ_API_KEY: 'gsk-test',
});
afterAll(() => upstream.close());

async function postGate(user: Awaited<ReturnType<typeof signUpUser>>, overrides: Record<string, unknown>) {
  return app.request('/v1/gates', { method: 'POST', headers: user.auth, json: gateInput(overrides) });
}

describe('plain model names in gates', () => {
  it('stores gpt-4o-mini as openai/gpt-4o-mini and answers through the OpenAI adapter', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'gpt-4o-mini' });
    expect(gate.model).toBe('openai/gpt-4o-mini');
    expect((await readGate(app, user, gate.id)).model).toBe('openai/gpt-4o-mini');

    const before = upstream.received.length;
    const answer = await answerOf(await chat(app, user, gate.id));
    expect(answer.model).toBe('openai/gpt-4o-mini');
    expect(upstream.received.slice(before).map((r) => r.model)).toEqual(['gpt-4o-mini']);
  });

  it('resolves Claude to Anthropic, never to a configured reseller', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      model: 'gpt-4o-mini',
      routingStrategy: 'fallback',
      fallbackModels: ['claude-sonnet-4-5', 'gemini-2.5-flash', 'mistral-small-latest'],
    });
    expect(gate.fallbackModels).toEqual([
      'anthropic/claude-sonnet-4-5',
      'gemini/gemini-2.5-flash',
      'mistral/mistral-small-latest',
    ]);
  });

  it('keeps a dated snapshot as named, sends it on the wire, and prices it as its model', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'gpt-4o-2024-08-06' });
    expect(gate.model).toBe('openai/gpt-4o-2024-08-06');
    const before = upstream.received.length;
    const answer = await answerOf(await chat(app, user, gate.id));
    expect(upstream.received.slice(before).map((r) => r.model)).toEqual(['gpt-4o-2024-08-06']);
    const gpt4o = findModel('openai/gpt-4o');
    const expected =
      (11 * (gpt4o?.inputPricePerMTok ?? Number.NaN) + 7 * (gpt4o?.outputPricePerMTok ?? Number.NaN)) / 1e6;
    expect(answer.costUsd).toBeCloseTo(expected, 12);
  });

  it('refuses a name two configured providers serve, listing both spellings', async () => {
    const user = await signUpUser(app);
    const res = await postGate(user, { model: 'meta-llama/llama-guard-4-12b' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as NativeError;
    const issue = body.error.details?.issues?.[0];
    expect(issue?.path).toBe('model');
    expect(issue?.message).toContain('groq/meta-llama/llama-guard-4-12b');
    expect(issue?.message).toContain('openrouter/meta-llama/llama-guard-4-12b');
    // Either spelling is accepted as it is.
    const chosen = await createGate(app, user, { model: 'groq/meta-llama/llama-guard-4-12b' });
    expect(chosen.model).toBe('groq/meta-llama/llama-guard-4-12b');
  });

  it('refuses an unknown name, and an unknown fallback, naming the field', async () => {
    const user = await signUpUser(app);
    const res = await postGate(user, {
      model: 'gpt-4o-mini',
      routingStrategy: 'fallback',
      fallbackModels: ['no-such-model-anywhere'],
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as NativeError;
    expect(body.error.details?.issues).toEqual([
      {
        path: 'fallbackModels.0',
        message: expect.stringContaining('unknown model "no-such-model-anywhere"'),
      },
    ]);
  });

  it('resolves plain names on PATCH and in GraphQL too', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const patched = await app.request(`/v1/gates/${gate.id}`, {
      method: 'PATCH',
      headers: user.auth,
      json: { model: 'claude-3-5-haiku-latest' },
    });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as { model: string }).model).toBe('anthropic/claude-3-5-haiku-latest');

    const created = await graphql<{ createGate: { data?: { model: string } } }>(
      app,
      user,
      `mutation ($input: GateInput!) {
        createGate(input: $input) { ... on MutationCreateGateSuccess { data { model } } }
      }`,
      { input: { name: `gql-${gate.id}`, taskType: 'CHAT', model: 'gpt-4o-mini' } },
    );
    expect(created.errors).toBeUndefined();
    expect(created.data?.createGate.data?.model).toBe('openai/gpt-4o-mini');
  });
});

describe('plain model names from clients', () => {
  it('takes a plain override where the gate permits one, and 400s an unresolvable one', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { allowOverrides: { model: true } });
    const before = upstream.received.length;
    const res = await completions(app, user, gate.id, { model: 'gpt-4o-mini' });
    expect(res.status, await res.clone().text()).toBe(200);
    // An OpenAI gate forwards the body and answers as OpenAI did; the gateway's id is in a header.
    expect(res.headers.get('x-gatehouse-model-used')).toBe('openai/gpt-4o-mini');
    expect(((await res.json()) as { model: string }).model).toBe('gpt-4o-mini');
    expect(upstream.received.slice(before).map((r) => r.model)).toEqual(['gpt-4o-mini']);

    const ambiguous = await completions(app, user, gate.id, { model: 'meta-llama/llama-guard-4-12b' });
    expect(ambiguous.status).toBe(400);
    expect(((await ambiguous.json()) as { error: { param: string; message: string } }).error).toMatchObject({
      param: 'model',
      message: expect.stringContaining('groq/meta-llama/llama-guard-4-12b'),
    });
  });

  it('reads the gate’s own model, named plainly, as no override at all', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'gpt-4o-mini' });
    const res = await chat(app, user, gate.id, { model: 'gpt-4o-mini' });
    expect(res.headers.get('x-gatehouse-ignored-overrides')).toBeNull();
    expect((await answerOf(res)).model).toBe('openai/gpt-4o-mini');
  });

  it('lists both spellings in GET /v1/models', async () => {
    const user = await signUpUser(app);
    await createGate(app, user, {
      model: 'gpt-4o-mini',
      routingStrategy: 'fallback',
      fallbackModels: ['mock/echo'],
    });
    const res = await app.request('/v1/models', { headers: user.auth });
    const ids = ((await res.json()) as { data: { id: string; owned_by: string }[] }).data;
    expect(ids).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: 'openai/gpt-4o-mini', owned_by: 'openai' }),
        expect.objectContaining({ id: 'gpt-4o-mini', owned_by: 'openai' }),
        expect.objectContaining({ id: 'mock/echo', owned_by: 'mock' }),
      ]),
    );
  });
});

describe('GET /v1/models?taskType=', () => {
  it('lists, for one task type, its gates and the configured models that serve it, and nothing else', async () => {
    const user = await signUpUser(app);
    const chatGate = await createGate(app, user, { model: 'gpt-4o-mini' });
    const embedGate = await createGate(app, user, {
      taskType: 'embeddings',
      model: 'text-embedding-3-small',
    });
    const res = await app.request('/v1/models?taskType=embeddings', { headers: user.auth });
    expect(res.status).toBe(200);
    const data = ((await res.json()) as { data: { id: string; owned_by: string; task_types: string[] }[] })
      .data;
    const ids = data.map((m) => m.id);
    expect(ids).toContain(embedGate.id);
    expect(ids).not.toContain(chatGate.id);
    expect(ids).toEqual(expect.arrayContaining(['openai/text-embedding-3-small', 'mock/embed']));
    expect(ids).not.toContain('openai/gpt-4o-mini');
    // Gemini is not configured here: its embedding models are not offered.
    expect(ids.some((id) => id.startsWith('gemini/'))).toBe(false);
    for (const m of data) expect(m.task_types, m.id).toEqual(expect.arrayContaining(['embeddings']));

    const bad = await app.request('/v1/models?taskType=painting', { headers: user.auth });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('taskType');
  });
});

describe('createModelNames (the rule itself)', () => {
  it('takes a name several providers serve from the one configured here', () => {
    const groqOnly = createModelNames(new Set(['groq']));
    expect(groqOnly.resolve('meta-llama/llama-guard-4-12b')).toEqual({
      ok: true,
      id: 'groq/meta-llama/llama-guard-4-12b',
    });
    const neither = createModelNames(new Set());
    expect(neither.resolve('meta-llama/llama-guard-4-12b')).toMatchObject({ ok: false });
  });

  it('resolves provider aliases: -latest names, dated snapshots, version suffixes', () => {
    const names = createModelNames(new Set());
    expect(names.resolve('claude-sonnet-4-5-20250929')).toEqual({
      ok: true,
      id: 'anthropic/claude-sonnet-4-5-20250929',
    });
    expect(names.resolve('gemini-2.0-flash-001')).toEqual({ ok: true, id: 'gemini/gemini-2.0-flash-001' });
    expect(names.resolve('openai/no-such-model')).toMatchObject({
      ok: false,
      message: expect.stringContaining('openai has no such model'),
    });
  });
});
