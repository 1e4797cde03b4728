import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { answerOf, chat, type LoggedAttempt, say } from './support/chat.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';
import { type ErrorBody, getLogs, type LogRow } from './support/logs.ts';

const app = useTestApp();

type Detail = LogRow & {
  attempts: LoggedAttempt[];
  metadata: unknown;
  provider_request: Record<string, unknown> | null;
  provider_response: Record<string, unknown> | null;
  client_request: unknown;
  media: { index: number; mimeType: string; bytes: number; url: string }[];
  replay_of: string | null;
  replays: string[];
};

async function readEntry(user: TestUser, id: string): Promise<Detail> {
  await app.runtime.logs.drain();
  const res = await app.request(`/v1/logs/${id}`, { headers: user.auth });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Detail;
}

const fallbackGate = { routingStrategy: 'fallback', model: 'mock/echo', fallbackModels: ['mock/fast'] };

describe('GET /v1/logs/:id', () => {
  it('shows a fallback request’s attempts, its metadata and the payloads of the model that answered', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { ...fallbackGate, temperature: 0.3 });
    const answer = await answerOf(
      await chat(
        app,
        user,
        gate.id,
        { messages: say('[mock:fail=503@mock/echo] hi') },
        { metadata: { customer: 'acme', run: 7 }, sessionId: 'session-1' },
      ),
    );
    const entry = await readEntry(user, answer.id);

    expect(entry).toMatchObject({
      id: answer.id,
      gate_id: gate.id,
      gate_name: gate.name,
      model_requested: 'mock/echo',
      model_used: 'mock/fast',
      success: true,
      status_code: 200,
      session_id: 'session-1',
      prompt_tokens: answer.usage.promptTokens,
      completion_tokens: answer.usage.completionTokens,
      total_tokens: answer.usage.totalTokens,
      cost_usd: answer.costUsd,
      metadata: { customer: 'acme', run: 7 },
    });
    expect(entry.attempts).toEqual([
      expect.objectContaining({ model: 'mock/echo', provider: 'mock', ok: false, status: 503 }),
      expect.objectContaining({ model: 'mock/fast', provider: 'mock', ok: true, status: 200, error: null }),
    ]);
    expect(entry.attempts[0]?.error).toMatch(/503/);
    expect(entry.provider_request).toMatchObject({
      model: 'fast',
      temperature: 0.3,
      messages: [expect.objectContaining({ role: 'user', content: '[mock:fail=503@mock/echo] hi' })],
    });
    expect(entry.provider_response).toMatchObject({
      model: 'mock/fast',
      choices: [expect.objectContaining({ message: expect.objectContaining({ content: 'OK' }) })],
    });

    // The summary fields are the same as in the list.
    const listed = (await getLogs(app, user)).logs.find((l) => l.id === answer.id);
    const {
      attempts,
      metadata,
      provider_request,
      provider_response,
      client_request,
      media,
      replay_of,
      replays,
      ...summary
    } = entry;
    expect(summary).toEqual(listed);
    // No replay, and none replayed it.
    expect([replay_of, replays]).toEqual([null, []]);
    // An answered request keeps no copy of the client's body (only a refused one does).
    expect(client_request).toBeNull();
    // A chat answer carries no files.
    expect(media).toEqual([]);
  });

  it('shows a request that failed on every model with each attempt and the last error', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, fallbackGate);
    const res = await chat(app, user, gate.id, { messages: say('[mock:fail=500] hi') });
    expect(res.status).toBe(502);
    await app.runtime.logs.drain();
    const [failed] = (await getLogs(app, user, { status: 'failed' })).logs;
    const entry = await readEntry(user, failed?.id as string);
    expect(entry).toMatchObject({ success: false, model_used: null, error_code: 'upstream_error' });
    expect(entry.attempts.map((a) => [a.model, a.ok, a.status])).toEqual([
      ['mock/echo', false, 500],
      ['mock/fast', false, 500],
    ]);
  });

  it('is a 404 for another user’s entry, an unknown id and an id that is not a UUID', async () => {
    const alice = await signUpUser(app);
    const bob = await signUpUser(app);
    const gate = await createGate(app, alice);
    const answer = await answerOf(await chat(app, alice, gate.id));
    await readEntry(alice, answer.id);
    for (const id of [answer.id, randomUUID(), 'not-a-uuid', answer.id.toUpperCase()]) {
      const res = await app.request(`/v1/logs/${id}`, { headers: bob.auth });
      expect(res.status, id).toBe(404);
      expect(((await res.json()) as ErrorBody).error).toEqual({
        code: 'not_found',
        message: 'Log entry not found',
      });
    }
  });
});

describe('entries of a deleted gate', () => {
  it('stay readable under the gate’s name, including ones still queued when it was deleted', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const written = await answerOf(await chat(app, user, gate.id));
    await app.runtime.logs.drain();
    const queued = await answerOf(await chat(app, user, gate.id));
    const del = await app.request(`/v1/gates/${gate.id}`, { method: 'DELETE', headers: user.auth });
    expect(del.status).toBe(204);

    for (const id of [written.id, queued.id]) {
      expect(await readEntry(user, id)).toMatchObject({ id, gate_id: null, gate_name: gate.name });
    }
    expect((await getLogs(app, user)).logs.map((l) => l.id)).toEqual([queued.id, written.id]);
  });
});
