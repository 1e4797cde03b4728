/**
 * Moderation through gates, end to end: POST /v3/moderation and OpenAI's /v1/moderations, on the
 * mock (keyword flags) and on local servers speaking OpenAI's and Mistral's moderation APIs;
 * fallback, an exact block limit under concurrency, one log entry per request, bad input.
 */
import { describe, expect, it } from 'vitest';
import { moderationKind } from '../src/dataplane/tasks/moderation.ts';
import { findModel } from '../src/domain/catalog.ts';
import { useTestApp } from './support/app.ts';
import { logEntryOf, type OpenAIError } from './support/chat.ts';
import { createGate, signUpUser } from './support/factories.ts';
import {
  expectBlockLimitHolds,
  expectFallsBack,
  expectFieldIssues,
  expectRefused,
  hasBearer,
  taskRoute,
  useUpstream,
} from './support/tasks.ts';

// One local server answers as OpenAI (/v1/moderations) and Mistral (/mistral/v1/moderations),
// each checking its key as the real one does.
const upstream = await useUpstream({
  serves: (path) => /^(\/mistral)?\/v1\/moderations$/.test(path),
  keyOk: (request) => hasBearer(request, request.path.startsWith('/mistral') ? 'm-key' : 'sk-test'),
});
const app = useTestApp({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${upstream.url}/v1`,
  MISTRAL_API_KEY: 'm-key',
  MISTRAL_BASE_URL: `${upstream.url}/mistral`,
});

type Verdict = { flagged: boolean; categories: Record<string, boolean>; scores: Record<string, number> };
type ModerationAnswer = {
  id: string;
  model: string;
  results: Verdict[];
  usage: { promptTokens: number; estimated?: boolean };
  costUsd: number;
  latencyMs: number;
};

const moderation = taskRoute(app, '/v3/moderation', { taskType: 'moderation', model: 'mock/moderation' });

/** OpenAI's answer for one input, as its API sends it. */
function openAIResult(flagged: string[] = []) {
  const names = ['harassment', 'hate', 'hate/threatening', 'self-harm', 'sexual', 'violence'];
  return {
    flagged: flagged.length > 0,
    categories: { ...Object.fromEntries(names.map((n) => [n, flagged.includes(n)])), illicit: null },
    category_scores: Object.fromEntries(names.map((n) => [n, flagged.includes(n) ? 0.97 : 0.001])),
    category_applied_input_types: Object.fromEntries(names.map((n) => [n, ['text']])),
  };
}

describe('POST /v3/moderation on the mock', () => {
  it('flags by keyword, deterministically, one verdict per input, and logs it', async () => {
    const user = await signUpUser(app);
    const gate = await moderation.gate(user);
    const res = await moderation.send(user, gate.id, {
      input: ['I will kill you', 'a lovely day', 'I hate this'],
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as ModerationAnswer;
    expect(answer.model).toBe('mock/moderation');
    expect(answer.results.map((r) => r.flagged)).toEqual([true, false, true]);
    const [kill, calm, hate] = answer.results as [Verdict, Verdict, Verdict];
    expect(kill.categories.violence).toBe(true);
    expect(kill.categories.hate).toBe(false);
    expect(kill.scores.violence).toBeGreaterThanOrEqual(0.9);
    expect(hate.categories.hate).toBe(true);
    expect(Object.values(calm.categories).some(Boolean)).toBe(false);
    expect(Math.max(...Object.values(calm.scores))).toBeLessThanOrEqual(0.05);
    expect(Object.keys(kill.categories)).toContain('hate/threatening');

    const again = (await (
      await moderation.send(user, gate.id, { input: 'I will kill you' })
    ).json()) as ModerationAnswer;
    expect(again.results).toEqual([kill]);

    expect(answer.usage.promptTokens).toBeGreaterThan(0);
    expect(answer.costUsd).toBe(0);
    const entry = await logEntryOf(app, answer.id);
    expect(entry).toMatchObject({ endpoint: '/v3/moderation', success: true, modelUsed: 'mock/moderation' });
    expect(entry.promptTokens).toBe(answer.usage.promptTokens);
    expect(Number(entry.costUsd)).toBe(0);
  });

  it('falls back from a failing model to the next provider, recording both attempts', async () => {
    const user = await signUpUser(app);
    upstream.reply({
      type: 'json',
      body: { id: 'modr-1', model: 'omni-moderation-latest', results: [openAIResult()] },
    });
    await expectFallsBack(app, user, moderation, {
      fallback: 'openai/omni-moderation-latest',
      data: (fail) => ({ input: `x ${fail}` }),
    });
  });

  it('refuses bad input with a 400 naming the field, and a gate of another type', async () => {
    const user = await signUpUser(app);
    const gate = await moderation.gate(user);
    await expectFieldIssues(
      (data) => moderation.send(user, gate.id, data),
      [
        [{}, 'data.input'],
        [{ input: '' }, 'data.input'],
        [{ input: [] }, 'data.input'],
        [{ input: 'x', colour: 'red' }, 'data.colour'],
      ],
    );
    const chatGate = await createGate(app, user, { model: 'mock/echo' });
    await expectRefused(
      await moderation.send(user, chatGate.id, { input: 'x' }),
      'moderation requests need a moderation gate',
    );
  });
});

describe('a block limit', () => {
  it('holds under 50 concurrent requests on Mistral’s priced model: no overshoot, one log entry each', async () => {
    const user = await signUpUser(app);
    const input = 'the same text, moderated many times over';
    const N = 7;
    const worst = moderationKind.worstCase(['mistral/mistral-moderation-latest'], { input: [input] });
    expect(worst).toBeCloseTo((Buffer.byteLength(input) * 0.1) / 1e6, 15);
    // Mistral reports the tokens it billed: as many as the worst case assumed.
    const tokens = Buffer.byteLength(input);
    upstream.reply(
      ...Array.from({ length: N }, () => ({
        type: 'json' as const,
        body: {
          id: 'm',
          model: 'mistral-moderation-latest',
          results: [{ categories: { sexual: false }, category_scores: { sexual: 0.01 } }],
          usage: { prompt_tokens: tokens, total_tokens: tokens, completion_tokens: 0 },
        },
      })),
    );
    const { spending, paid } = await expectBlockLimitHolds(app, user, {
      worst,
      fits: N,
      exact: true,
      digits: 12,
      route: moderation,
      gate: { model: 'mistral/mistral-moderation-latest' },
      data: { input },
    });
    expect(spending).toBeCloseTo(N * worst, 12);
    for (const e of paid) expect(Number(e.costUsd)).toBeCloseTo(worst, 12);
  });
});

describe('providers', () => {
  it('speaks OpenAI’s /moderations, keeping its category names; free', async () => {
    const user = await signUpUser(app);
    const gate = await moderation.gate(user, { model: 'omni-moderation-latest' });
    expect(gate.model).toBe('openai/omni-moderation-latest');
    upstream.reply({
      type: 'json',
      body: {
        id: 'modr-1',
        model: 'omni-moderation-latest',
        results: [openAIResult(['hate', 'hate/threatening']), openAIResult()],
      },
    });
    const res = await moderation.send(user, gate.id, { input: ['they must all die', 'hello'] });
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as ModerationAnswer;
    expect(upstream.last().path).toBe('/v1/moderations');
    expect(upstream.last().body).toEqual({
      model: 'omni-moderation-latest',
      input: ['they must all die', 'hello'],
    });
    expect(answer.results[0]).toMatchObject({
      flagged: true,
      categories: { hate: true, 'hate/threatening': true, violence: false },
      scores: { hate: 0.97 },
    });
    // OpenAI's null for a category a model does not score is no verdict: left out.
    expect(answer.results[0]?.categories).not.toHaveProperty('illicit');
    expect(answer.results[1]?.flagged).toBe(false);
    expect(answer.usage.estimated).toBe(true);
    expect(answer.costUsd).toBe(0);
  });

  it('speaks Mistral’s /v1/moderations: its own categories, flagged when any is, priced per token', async () => {
    const user = await signUpUser(app);
    const gate = await moderation.gate(user, { model: 'mistral-moderation-latest' });
    expect(gate.model).toBe('mistral/mistral-moderation-latest');
    expect(findModel('mistral/mistral-moderation-latest')?.inputPricePerMTok).toBe(0.1);
    const categories = {
      sexual: false,
      hate_and_discrimination: false,
      violence_and_threats: true,
      dangerous_and_criminal_content: false,
      selfharm: false,
      health: false,
      financial: false,
      law: false,
      pii: false,
    };
    upstream.reply({
      type: 'json',
      body: {
        id: 'mod-1',
        model: 'mistral-moderation-latest',
        results: [
          {
            categories,
            category_scores: Object.fromEntries(
              Object.entries(categories).map(([k, v]) => [k, v ? 0.93 : 0.002]),
            ),
          },
        ],
        usage: { prompt_tokens: 12, total_tokens: 12, completion_tokens: 0 },
      },
    });
    const res = await moderation.send(user, gate.id, { input: 'I will hurt you' });
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as ModerationAnswer;
    expect(upstream.last().path).toBe('/mistral/v1/moderations');
    expect(upstream.last().body).toEqual({ model: 'mistral-moderation-latest', input: ['I will hurt you'] });
    expect(answer.results).toEqual([
      {
        flagged: true,
        categories,
        scores: expect.objectContaining({ violence_and_threats: 0.93, pii: 0.002 }),
      },
    ]);
    expect(answer.usage).toEqual({ promptTokens: 12 });
    expect(answer.costUsd).toBeCloseTo((12 * 0.1) / 1e6, 14);
    const entry = await logEntryOf(app, answer.id);
    expect(Number(entry.costUsd)).toBeCloseTo(answer.costUsd, 12);
  });
});

describe('POST /v1/moderations (OpenAI-compatible)', () => {
  type OpenAIModeration = {
    id: string;
    model: string;
    results: {
      flagged: boolean;
      categories: Record<string, boolean>;
      category_scores: Record<string, number>;
      category_applied_input_types?: Record<string, string[]>;
    }[];
  };

  it('answers OpenAI’s shape with every OpenAI category, from the mock and from Mistral', async () => {
    const user = await signUpUser(app);
    const gate = await moderation.gate(user);
    const headers = { ...user.auth, 'x-gatehouse-gate-id': gate.id };
    const res = await app.request('/v1/moderations', {
      method: 'POST',
      headers,
      json: { input: ['kill them all', 'hi'] },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as OpenAIModeration;
    expect(Object.keys(body).sort()).toEqual(['id', 'model', 'results']);
    expect(body.model).toBe('mock/moderation');
    expect(body.results).toHaveLength(2);
    const [kill] = body.results;
    expect(kill?.flagged).toBe(true);
    expect(kill?.categories.violence).toBe(true);
    for (const name of [
      'harassment',
      'harassment/threatening',
      'hate',
      'hate/threatening',
      'illicit',
      'illicit/violent',
      'self-harm',
      'self-harm/instructions',
      'self-harm/intent',
      'sexual',
      'sexual/minors',
      'violence',
      'violence/graphic',
    ]) {
      expect(typeof kill?.categories[name], name).toBe('boolean');
      expect(typeof kill?.category_scores[name], name).toBe('number');
    }
    const entry = await logEntryOf(app, body.id);
    expect(entry).toMatchObject({ endpoint: '/v1/moderations', success: true });

    // A Mistral model's categories, mapped onto OpenAI's.
    const mistralGate = await moderation.gate(user, { model: 'mistral/mistral-moderation-latest' });
    upstream.reply({
      type: 'json',
      body: {
        id: 'mod-2',
        model: 'mistral-moderation-latest',
        results: [
          {
            categories: { hate_and_discrimination: true, selfharm: false, pii: true },
            category_scores: { hate_and_discrimination: 0.8, selfharm: 0.1, pii: 0.9 },
          },
        ],
      },
    });
    const mapped = (await (
      await app.request('/v1/moderations', {
        method: 'POST',
        headers: user.auth,
        json: { model: mistralGate.id, input: 'x' },
      })
    ).json()) as OpenAIModeration;
    expect(mapped.results[0]).toMatchObject({
      flagged: true,
      categories: { hate: true, 'self-harm': false, violence: false },
      category_scores: { hate: 0.8, 'self-harm': 0.1 },
    });
  });

  it('answers errors in OpenAI’s shape', async () => {
    const user = await signUpUser(app);
    const gate = await moderation.gate(user);
    const res = await app.request('/v1/moderations', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      json: { model: 'mock/moderation' },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as OpenAIError).error).toMatchObject({
      type: 'invalid_request_error',
      param: 'input',
    });
  });
});
