/**
 * Entries that tell the truth, and Replay: naming the gate as the model overrides nothing (the
 * README's SDK example sends `model: "gate"`); each attempt carries what it was charged, marked
 * where that is an upper bound; a type priced per unit says what was billed; a replayed request
 * through its gate leaves a new entry with the same request, linked both ways.
 */
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { chat, completions, logEntryOf, say } from './support/chat.ts';
import { createGate, graphql, signUpUser } from './support/factories.ts';

const app = useTestApp({ GATEHOUSE_ATTEMPT_TIMEOUT_MS: '300' });

type Attempt = { model: string; ok: boolean; costUsd?: number; costUpperBound?: boolean; billed?: unknown };

describe('the gate named as the model is no override', () => {
  it('the README example (`model: "gate"`), the gate’s name, `gatehouse/<name>` and its id', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/echo' });
    for (const model of ['gate', gate.name, `gatehouse/${gate.name}`, gate.id]) {
      const res = await completions(app, user, gate.id, { model });
      expect(res.status, await res.clone().text()).toBe(200);
      expect(res.headers.get('x-gatehouse-ignored-overrides'), model).toBeNull();
      const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
      expect(entry.ignoredOverrides, model).toEqual([]);
      expect(entry.modelUsed).toBe('mock/echo');
    }
  });

  it('a model the gate does not allow is still an ignored override', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/echo' });
    const res = await completions(app, user, gate.id, { model: 'mock/smart' });
    expect(res.headers.get('x-gatehouse-ignored-overrides')).toBe('model');
  });
});

describe('what each attempt cost', () => {
  it('the answer’s own cost on its attempt; a timed-out one its worst case, marked an upper bound', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      model: 'mock/smart',
      fallbackModels: ['mock/echo'],
      routingStrategy: 'fallback',
    });
    const res = await chat(app, user, gate.id, { messages: say('[mock:timeout@mock/smart] hi') });
    expect(res.status, await res.clone().text()).toBe(200);
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    const [timedOut, answered] = entry.attempts as Attempt[];
    expect(timedOut).toMatchObject({ model: 'mock/smart', ok: false, costUpperBound: true });
    expect(timedOut?.costUsd).toBeGreaterThan(0);
    expect(answered).toMatchObject({ model: 'mock/echo', ok: true });
    expect(answered?.costUpperBound).toBeUndefined();
    expect((answered?.costUsd ?? 0) + (timedOut?.costUsd ?? 0)).toBeCloseTo(Number(entry.costUsd), 8);
  });

  it('an image answer says how many images were billed', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { taskType: 'image', model: 'mock/image' });
    const res = await app.request('/v3/image', {
      method: 'POST',
      headers: user.auth,
      json: { gateId: gate.id, data: { prompt: 'a cat', count: 2 } },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect((entry.attempts as Attempt[])[0]?.billed).toEqual({ quantity: 2, unit: 'images' });
  });
});

const ENTRY = `query Entry($id: ID!) {
  log(id: $id) { id replayOf replays replayRequest conversation providerRequest }
}`;
type Entry = {
  id: string;
  replayOf: string | null;
  replays: string[];
  replayRequest: { endpoint: string; data: Record<string, unknown> } | null;
  conversation: { role: string; content: unknown }[] | null;
  providerRequest: unknown;
};

async function readEntry(id: string, user: Awaited<ReturnType<typeof signUpUser>>) {
  await app.runtime.logs.drain();
  const res = await graphql<{ log: Entry }>(app, user, ENTRY, { id });
  expect(res.errors).toBeUndefined();
  return res.data?.log as Entry;
}

describe('Replay', () => {
  it('sends the logged request through its gate again: a new entry, the same request, linked both ways', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      model: 'mock/echo',
      systemPrompt: 'Be brief.',
      allowOverrides: { temperature: true },
    });
    const first = await chat(app, user, gate.id, {
      messages: [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'Echo: hello' },
        { role: 'user', content: 'again' },
      ],
      temperature: 0.3,
    });
    expect(first.status, await first.clone().text()).toBe(200);
    const firstId = first.headers.get('x-gatehouse-request-id') as string;
    const original = await readEntry(firstId, user);
    expect(original.conversation?.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    // The gate's own system prompt is left out: the gate adds it again.
    expect(original.replayRequest).toEqual({
      endpoint: '/v3/chat',
      data: {
        messages: [
          { role: 'user', content: 'hello' },
          { role: 'assistant', content: 'Echo: hello' },
          { role: 'user', content: 'again' },
        ],
        temperature: 0.3,
      },
    });

    const replay = await app.request(original.replayRequest?.endpoint as string, {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-replay-of': firstId },
      json: { gateId: gate.id, data: original.replayRequest?.data },
    });
    expect(replay.status, await replay.clone().text()).toBe(200);
    const replayId = replay.headers.get('x-gatehouse-request-id') as string;
    expect(replayId).not.toBe(firstId);
    const replayed = await readEntry(replayId, user);
    expect(replayed.replayOf).toBe(firstId);
    expect(replayed.providerRequest).toEqual(original.providerRequest);
    expect((await readEntry(firstId, user)).replays).toEqual([replayId]);

    const rest = await app.request(`/v1/logs/${replayId}`, { headers: user.auth });
    expect(((await rest.json()) as { replay_of: string }).replay_of).toBe(firstId);
  });

  it('refuses an x-gatehouse-replay-of that is not an entry id, naming the header', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {});
    const res = await app.request('/v3/chat', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-replay-of': 'yesterday' },
      json: { gateId: gate.id, data: { messages: say('hi') } },
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('x-gatehouse-replay-of');
  });
});
