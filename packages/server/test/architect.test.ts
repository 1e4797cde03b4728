/**
 * The Architect over REST and GraphQL, on the mock provider's catalog (mock/fast: cheapest,
 * mock/smart: best, mock/echo: quickest by the catalog) and traffic sent through the gateway.
 */
import type { TaskAnalysis } from '@gatehouse/rules/architect';
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { answerOf, chat, say } from './support/chat.ts';
import { createGate, graphql, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

type Suggestion = { taskAnalysis: TaskAnalysis; enhancedDescription?: string };

async function suggest(user: TestUser, body: Record<string, unknown>) {
  const res = await app.request('/v1/gates/suggestions', { method: 'POST', headers: user.auth, json: body });
  return {
    status: res.status,
    body: (await res.json()) as Suggestion & { error?: { code: string; details?: unknown } },
  };
}

async function suggestOk(user: TestUser, body: Record<string, unknown>) {
  const { status, body: answer } = await suggest(user, { availableProviders: ['mock'], ...body });
  expect(status, JSON.stringify(answer)).toBe(200);
  return answer;
}

const scoreOf = (a: TaskAnalysis, model: string) => a.scores.find((s) => s.model === model);

/** `count` chat requests through the gate, `failing` of them failing on `failOn` first. */
async function traffic(
  user: TestUser,
  gateId: string,
  count: number,
  opts: { failing?: number; failOn?: string; text?: string } = {},
) {
  const batch = Array.from({ length: count }, (_, i) => {
    const fail = i < (opts.failing ?? 0) ? `[mock:fail=500@${opts.failOn}] ` : '';
    return async () =>
      answerOf(await chat(app, user, gateId, { messages: say(`${fail}${opts.text ?? 'hi'}`) }));
  });
  for (let i = 0; i < batch.length; i += 20) await Promise.all(batch.slice(i, i + 20).map((run) => run()));
  await app.runtime.logs.drain();
}

describe('POST /v1/gates/suggestions', () => {
  it('moves the choice with the weights: cost 1 picks the cheapest, quality 1 the best, latency 1 the quickest', async () => {
    const user = await signUpUser(app);
    const description = 'Answer customer questions about orders';
    const cheap = await suggestOk(user, { description, costWeight: 1, latencyWeight: 0, qualityWeight: 0 });
    expect(cheap.taskAnalysis.primary).toBe('mock/fast');
    expect(cheap.taskAnalysis.weights).toEqual({ cost: 1, latency: 0, quality: 0 });
    const best = await suggestOk(user, { description, analysisMethod: 'custom', qualityWeight: 1 });
    expect(best.taskAnalysis.primary).toBe('mock/smart');
    const quick = await suggestOk(user, { description, latencyWeight: 1 });
    expect(quick.taskAnalysis.primary).toBe('mock/echo');
    // The reasoning names the figures behind the choice.
    expect(best.taskAnalysis.reasoning).toContain('mock/smart scores');
    expect(best.taskAnalysis.reasoning).toContain('quality 90/100 (general)');
    expect(best.taskAnalysis.taskType).toBe('chat');
    expect(best.taskAnalysis.alternatives.length).toBeGreaterThan(0);
    expect(best.taskAnalysis.fallbacks).not.toContain('mock/smart');
  });

  it('never recommends a model over the cost cap, and lists it with the reason', async () => {
    const user = await signUpUser(app);
    // mock/smart: 0.75 × $3 + 0.25 × $15 per M tokens = $0.006 per 1k tokens.
    const capped = await suggestOk(user, {
      description: 'Summarise long legal contracts',
      qualityWeight: 1,
      maxCostPer1kTokens: 0.002,
    });
    const a = capped.taskAnalysis;
    expect(a.primary).not.toBe('mock/smart');
    expect([...a.alternatives, ...a.fallbacks]).not.toContain('mock/smart');
    expect(scoreOf(a, 'mock/smart')?.excludedBecause).toBe('costs $0.006 per 1k tokens, over the $0.002 cap');
    expect(a.reasoning).toMatch(/1 of 3 models excluded: 1 over the \$0\.002 cap/);
  });

  it('holds the observed p95 against the latency cap, where the catalog alone would pass the model', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/fast' });
    // The catalog says 300 ms; here 20 requests take 1.2 s each.
    await traffic(user, gate.id, 20, { text: '[mock:delay=1200] hi' });
    const body = { description: 'Autocomplete search queries', costWeight: 1, maxLatencyMs: 1000 };
    const a = (await suggestOk(user, body)).taskAnalysis;
    expect(scoreOf(a, 'mock/fast')?.excludedBecause).toMatch(
      /^observed p95 over 20 attempts is 1\d{3} ms, over the 1000 ms cap$/,
    );
    expect(a.primary).toBe('mock/echo');
    // Another account's traffic is its own: there the catalog's figure stands.
    const other = await signUpUser(app);
    expect((await suggestOk(other, body)).taskAnalysis.primary).toBe('mock/fast');
  });

  it('reads the task and the capabilities from the description by the documented rules, and offers a clearer description', async () => {
    const user = await signUpUser(app);
    const a = await suggestOk(user, {
      description: 'read screenshots of invoices and return the fields as json',
      qualityWeight: 1,
    });
    expect(a.taskAnalysis.readBy).toBe('rules');
    expect(a.taskAnalysis.requiredCapabilities).toEqual(
      expect.arrayContaining(['vision', 'structuredOutput']),
    );
    // Only mock/smart takes images, by its facts.
    expect(a.taskAnalysis.primary).toBe('mock/smart');
    expect(scoreOf(a.taskAnalysis, 'mock/fast')?.excludedBecause).toBe(
      'lacks image input, which the description needs',
    );
    expect(a.enhancedDescription).toBe(
      'Read screenshots of invoices and return the fields as json. Task type: chat. It needs structured (JSON) output, image input.',
    );
    const embeddings = await suggestOk(user, { description: 'Embeddings for semantic search over our docs' });
    expect(embeddings.taskAnalysis.taskType).toBe('embeddings');
    expect(embeddings.taskAnalysis.primary).toMatch(/^mock\/embed/);
    const none = await suggestOk(user, { description: 'Chat', enableDescriptionEnhancement: false });
    expect(none.enhancedDescription).toBeUndefined();
  });

  it('refuses bad input with 400 naming the field, and needs a caller', async () => {
    const user = await signUpUser(app);
    for (const [body, path] of [
      [{}, 'description'],
      [{ description: 'x', costWeight: 2 }, 'costWeight'],
      [{ description: 'x', analysisMethod: 'custom', costWeight: 0 }, 'costWeight'],
      [{ description: 'x', taskType: 'poetry' }, 'taskType'],
      [{ description: 'x', maxLatencyMs: -1 }, 'maxLatencyMs'],
      [{ description: 'x', availableProviders: ['Not A Provider'] }, 'availableProviders.0'],
      [{ description: 'x', surprise: true }, 'surprise'],
    ] as const) {
      const { status, body: answer } = await suggest(user, body);
      expect(status, JSON.stringify(body)).toBe(400);
      expect(answer.error?.code).toBe('invalid_request');
      expect(JSON.stringify(answer.error?.details)).toContain(`"${path}"`);
    }
    const res = await app.request('/v1/gates/suggestions', { method: 'POST', json: { description: 'x' } });
    expect(res.status).toBe(401);
  });
});

describe('POST /v1/gates/:id/analysis', () => {
  it('ranks a model that fails 30 % of the gate’s requests below one that does not, and stores the analysis', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      model: 'mock/fast',
      routingStrategy: 'fallback',
      fallbackModels: ['mock/echo'],
      analysisMethod: 'cost',
    });
    const analyse = async () => {
      const res = await app.request(`/v1/gates/${gate.id}/analysis`, { method: 'POST', headers: user.auth });
      expect(res.status, await res.clone().text()).toBe(200);
      return (await res.json()) as Suggestion & { gate: { taskAnalysis: TaskAnalysis } };
    };
    // Healthy traffic: the cheapest model leads.
    await traffic(user, gate.id, 40);
    const before = (await analyse()).taskAnalysis;
    expect(before.primary).toBe('mock/fast');
    expect(before.window.scope).toBe('gate');
    // Then 30 of 100 requests fail on mock/fast (mock/echo answers them).
    await traffic(user, gate.id, 100, { failing: 30, failOn: 'mock/fast' });
    const after = await analyse();
    const fast = scoreOf(after.taskAnalysis, 'mock/fast');
    const echo = scoreOf(after.taskAnalysis, 'mock/echo');
    expect(fast?.facts.errorRate).toBeCloseTo(30 / 140, 3);
    expect(fast?.total).toBeLessThan(echo?.total ?? 0);
    expect(after.taskAnalysis.primary).toBe('mock/echo');
    expect(after.taskAnalysis.reasoning).toContain('Current model: mock/fast scores');
    // Stored on the gate, as REST and GraphQL read it.
    expect(after.gate.taskAnalysis.primary).toBe('mock/echo');
    const read = await app.request(`/v1/gates/${gate.id}`, { headers: user.auth });
    expect(((await read.json()) as { taskAnalysis: TaskAnalysis }).taskAnalysis.analysedAt).toBe(
      after.taskAnalysis.analysedAt,
    );
  });

  it('answers 404 for another user’s gate, and 400 for a bad option', async () => {
    const owner = await signUpUser(app);
    const gate = await createGate(app, owner);
    const stranger = await signUpUser(app);
    const res = await app.request(`/v1/gates/${gate.id}/analysis`, {
      method: 'POST',
      headers: stranger.auth,
    });
    expect(res.status).toBe(404);
    const bad = await app.request(`/v1/gates/${gate.id}/analysis`, {
      method: 'POST',
      headers: owner.auth,
      json: { windowDays: 1000 },
    });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('windowDays');
  });
});

describe('autoEnhanceDescription', () => {
  it('replaces a description saved on the gate with the enhanced one, once, and only when it changes or the toggle turns on', async () => {
    const user = await signUpUser(app);
    const read = async (id: string) =>
      (
        (await (await app.request(`/v1/gates/${id}`, { headers: user.auth })).json()) as {
          description: string;
        }
      ).description;
    const patch = (id: string, json: Record<string, unknown>) =>
      app.request(`/v1/gates/${id}`, { method: 'PATCH', headers: user.auth, json });
    const gate = await createGate(app, user, {
      description: 'answer questions about invoices',
      autoEnhanceDescription: true,
    });
    expect(gate.description).toBe('Answer questions about invoices. Task type: chat.');
    // Another field: the description stays as it is (and is not enhanced twice).
    expect((await patch(gate.id, { temperature: 0.5 })).status).toBe(200);
    expect(await read(gate.id)).toBe('Answer questions about invoices. Task type: chat.');
    expect((await patch(gate.id, { description: 'extract invoice fields as json' })).status).toBe(200);
    expect(await read(gate.id)).toBe(
      'Extract invoice fields as json. Task type: chat. It needs structured (JSON) output.',
    );
    // Off: saved as written. Turned on: the current description is enhanced.
    const plain = await createGate(app, user, { description: 'summarise support tickets' });
    expect(plain.description).toBe('summarise support tickets');
    expect((await patch(plain.id, { autoEnhanceDescription: true })).status).toBe(200);
    expect(await read(plain.id)).toBe('Summarise support tickets. Task type: chat.');
  });
});

describe('the Architect in GraphQL', () => {
  it('suggests and analyses with the same rules, typed', async () => {
    const user = await signUpUser(app);
    const suggested = await graphql<{
      suggestModels: {
        data: {
          taskAnalysis: { primary: string; scores: { model: string; excludedBecause: string | null }[] };
        };
      };
    }>(
      app,
      user,
      `mutation($input: SuggestionInput!) { suggestModels(input: $input) {
         ... on MutationSuggestModelsSuccess { data { taskAnalysis { primary scores { model excludedBecause } } } }
       } }`,
      {
        input: {
          description: 'Legal summaries',
          qualityWeight: 1,
          maxCostPer1kTokens: 0.002,
          availableProviders: ['mock'],
        },
      },
    );
    expect(suggested.errors).toBeUndefined();
    expect(suggested.data?.suggestModels.data.taskAnalysis.primary).not.toBe('mock/smart');
    const gate = await createGate(app, user, { model: 'mock/smart', analysisMethod: 'cost' });
    const analysed = await graphql<{
      analyseGate: {
        data: { taskAnalysis: { primary: string }; gate: { analysis: { primary: string; readBy: string } } };
      };
    }>(
      app,
      user,
      `mutation($id: ID!) { analyseGate(id: $id) {
         ... on MutationAnalyseGateSuccess { data { taskAnalysis { primary } gate { analysis { primary readBy } } } }
       } }`,
      { id: gate.id },
    );
    expect(analysed.data?.analyseGate.data.taskAnalysis.primary).toBe('mock/fast');
    expect(analysed.data?.analyseGate.data.gate.analysis).toEqual({ primary: 'mock/fast', readBy: 'rules' });
    const refused = await graphql<{ suggestModels: { __typename: string; issues?: { path: string }[] } }>(
      app,
      user,
      `mutation { suggestModels(input: { description: "x", costWeight: 5 }) {
         __typename ... on ValidationError { issues { path } } } }`,
    );
    expect(refused.data?.suggestModels.__typename).toBe('ValidationError');
    expect(refused.data?.suggestModels.issues?.[0]?.path).toBe('costWeight');
  });
});
