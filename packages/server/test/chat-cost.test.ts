import { afterAll, describe, expect, it } from 'vitest';
import { findModel } from '../src/domain/catalog.ts';
import { useTestApp } from './support/app.ts';
import {
  answerOf,
  chat,
  completions,
  logEntriesOf,
  logEntryOf,
  type NativeAnswer,
  readGate,
  say,
} from './support/chat.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';
import { startFakeOpenAI } from './support/upstream.ts';

const upstream = await startFakeOpenAI();
const app = useTestApp({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: upstream.url });
afterAll(() => upstream.close());

/** Dollars for `usage` at the catalog's per-million-token prices of `modelId`. */
function priced(modelId: string, usage: { promptTokens: number; completionTokens: number }) {
  const model = findModel(modelId);
  if (!model?.inputPricePerMTok || !model.outputPricePerMTok) throw new Error(`${modelId} has no price`);
  return (
    (usage.promptTokens * model.inputPricePerMTok + usage.completionTokens * model.outputPricePerMTok) / 1e6
  );
}

async function expectLoggedAsAnswered(answer: NativeAnswer) {
  const entry = await logEntryOf(app, answer.id);
  expect(entry).toMatchObject({
    promptTokens: answer.usage.promptTokens,
    completionTokens: answer.usage.completionTokens,
    tokensEstimated: answer.usage.estimated === true,
  });
  expect(Number(entry.costUsd)).toBeCloseTo(answer.costUsd, 8);
  return entry;
}

/** GET the gate until its spendingCurrent differs from `before` (bounded: 5 s). */
async function spendingAfter(user: TestUser, gateId: string, before: number) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const gate = await readGate(app, user, gateId);
    if (gate.spendingCurrent !== before || Date.now() > deadline) return gate.spendingCurrent;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('cost and tokens', () => {
  it('charges prompt and completion tokens at the catalog price of the model', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/smart' });
    const res = await chat(app, user, gate.id, { messages: say('a question with several words in it') });
    const answer = await answerOf(res);
    expect(answer.model).toBe('mock/smart');
    expect(answer.usage.promptTokens).toBeGreaterThan(0);
    expect(answer.usage.completionTokens).toBeGreaterThan(0);
    expect(answer.usage.totalTokens).toBe(answer.usage.promptTokens + answer.usage.completionTokens);
    expect(answer.usage.estimated).toBeUndefined();
    expect(answer.costUsd).toBeCloseTo(priced('mock/smart', answer.usage), 12);
    expect(Number(res.headers.get('x-gatehouse-cost-usd'))).toBeCloseTo(answer.costUsd, 12);
    await expectLoggedAsAnswered(answer);
  });

  it('charges the price of the model that answered, not the one requested', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      routingStrategy: 'fallback',
      model: 'mock/smart',
      fallbackModels: ['mock/fast'],
    });
    const answer = await answerOf(
      await chat(app, user, gate.id, { messages: say('[mock:fail=503@mock/smart] hi') }),
    );
    expect(answer.model).toBe('mock/fast');
    expect(answer.costUsd).toBeCloseTo(priced('mock/fast', answer.usage), 12);
    expect(answer.costUsd).not.toBeCloseTo(priced('mock/smart', answer.usage), 12);
    const entry = await expectLoggedAsAnswered(answer);
    expect(entry).toMatchObject({ modelRequested: 'mock/smart', modelUsed: 'mock/fast' });
  });

  it('takes the tokens the provider reports', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini' });
    upstream.reply(() => 'fine', { prompt_tokens: 1234, completion_tokens: 567, total_tokens: 1801 });
    const answer = await answerOf(await chat(app, user, gate.id));
    expect(answer.usage).toEqual({ promptTokens: 1234, completionTokens: 567, totalTokens: 1801 });
    expect(answer.costUsd).toBeCloseTo(priced('openai/gpt-4o-mini', answer.usage), 12);
    await expectLoggedAsAnswered(answer);
  });

  it('counts the tokens itself, marked as an estimate, when the provider reports none', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini' });
    upstream.reply(() => 'a reply of a handful of tokens', null);
    const answer = await answerOf(await chat(app, user, gate.id, { messages: say('count me, please') }));
    expect(answer.usage.estimated).toBe(true);
    expect(answer.usage.promptTokens).toBeGreaterThan(0);
    expect(answer.usage.completionTokens).toBeGreaterThan(0);
    expect(answer.costUsd).toBeCloseTo(priced('openai/gpt-4o-mini', answer.usage), 12);
    const entry = await expectLoggedAsAnswered(answer);
    expect(entry.tokensEstimated).toBe(true);
  });

  it('reports the same usage on the OpenAI-compatible endpoint as it logs', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await completions(app, user, gate.id, { messages: say('how much is this') });
    const body = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect(entry.promptTokens).toBe(body.usage.prompt_tokens);
    expect(entry.completionTokens).toBe(body.usage.completion_tokens);
    const cost = priced('mock/echo', {
      promptTokens: body.usage.prompt_tokens,
      completionTokens: body.usage.completion_tokens,
    });
    expect(Number(entry.costUsd)).toBeCloseTo(cost, 8);
    expect(Number(res.headers.get('x-gatehouse-cost-usd'))).toBeCloseTo(cost, 12);
  });

  it('adds each answer cost to spendingCurrent of a gate without a limit', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/smart' });
    expect((await readGate(app, user, gate.id)).spendingCurrent).toBe(0);
    const answers = await Promise.all(
      [1, 2, 3].map(async (i) =>
        answerOf(await chat(app, user, gate.id, { messages: say(`question ${i}`) })),
      ),
    );
    const total = answers.reduce((sum, a) => sum + a.costUsd, 0);
    const after = await spendingAfter(user, gate.id, 0);
    expect(after).toBeCloseTo(total, 8);
  });

  it('adds the cost to spendingCurrent of a gate with a limit before it answers', async () => {
    const user = await signUpUser(app);
    const alert = await createGate(app, user, { spendingLimit: 100, spendingEnforcement: 'alert_only' });
    const block = await createGate(app, user, { spendingLimit: 100, spendingEnforcement: 'block' });
    for (const gate of [alert, block]) {
      const answer = await answerOf(await chat(app, user, gate.id));
      expect((await readGate(app, user, gate.id)).spendingCurrent, gate.name).toBeCloseTo(answer.costUsd, 8);
    }
  });

  it('charges nothing for a failed request', async () => {
    const user = await signUpUser(app);
    const block = await createGate(app, user, { spendingLimit: 100, spendingEnforcement: 'block' });
    const res = await chat(app, user, block.id, { messages: say('[mock:fail=500] hi') });
    expect(res.status).toBe(502);
    // The reservation made before the call is released in full.
    expect((await readGate(app, user, block.id)).spendingCurrent).toBe(0);
    const entries = await logEntriesOf(app, block.id);
    expect(entries.map((e) => [e.success, Number(e.costUsd)])).toEqual([[false, 0]]);
  });
});
