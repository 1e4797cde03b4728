/**
 * A request refused or failed once its gate is known leaves a log entry, and its error answer
 * names that entry in x-gatehouse-request-id, as an answer does: a client's failure is found in
 * the log by the id it was given, on the native, OpenAI and Anthropic routes alike.
 */
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

async function entry(user: TestUser, id: string | null) {
  expect(id, 'x-gatehouse-request-id').toMatch(/^[0-9a-f-]{36}$/);
  await app.runtime.logs.drain();
  const res = await app.request(`/v1/logs/${id}`, { headers: user.auth });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as {
    id: string;
    status_code: number;
    success: boolean;
    error_code: string | null;
  };
}

describe('an error answer names its log entry', () => {
  it('on /v3/chat: a spending refusal (402), a provider failure (502) and an invalid body (400)', async () => {
    const user = await signUpUser(app);
    const blocked = await createGate(app, user, { spendingLimit: 0, spendingEnforcement: 'block' });
    const open = await createGate(app, user, {});
    const cases = [
      { gateId: blocked.id, data: { messages: [{ role: 'user', content: 'hi' }] }, status: 402 },
      { gateId: open.id, data: { messages: [{ role: 'user', content: '[mock:fail=500] hi' }] }, status: 502 },
      { gateId: open.id, data: { messages: [{ role: 'robot', content: 'hi' }] }, status: 400 },
    ];
    for (const { status, ...body } of cases) {
      const res = await app.request('/v3/chat', { method: 'POST', headers: user.auth, json: body });
      expect(res.status, await res.clone().text()).toBe(status);
      const id = res.headers.get('x-gatehouse-request-id');
      const logged = await entry(user, id);
      expect(logged).toMatchObject({ success: false, status_code: status });
      // The body names it too, in the native shape.
      expect(((await res.json()) as { error: { requestId?: string } }).error.requestId).toBe(id);
    }
  });

  it('on /v1/chat/completions and /v1/messages, in their own shapes', async () => {
    const user = await signUpUser(app);
    const blocked = await createGate(app, user, { spendingLimit: 0, spendingEnforcement: 'block' });
    const openai = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': blocked.id },
      json: { model: 'mock/echo', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(openai.status).toBe(402);
    const openaiBody = (await openai.clone().json()) as { error: { type: string; request_id?: string } };
    expect(openaiBody.error.type).toBe('insufficient_quota');
    expect(openaiBody.error.request_id).toBe(openai.headers.get('x-gatehouse-request-id'));
    expect((await entry(user, openai.headers.get('x-gatehouse-request-id'))).status_code).toBe(402);

    const anthropic = await app.request('/v1/messages', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': blocked.id },
      json: { model: 'claude-x', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(anthropic.status).toBe(402);
    const anthropicBody = (await anthropic.clone().json()) as { type: string; request_id?: string };
    expect(anthropicBody.type).toBe('error');
    expect(anthropicBody.request_id).toBe(anthropic.headers.get('x-gatehouse-request-id'));
    expect((await entry(user, anthropic.headers.get('x-gatehouse-request-id'))).status_code).toBe(402);
  });

  it('where no entry was left (a gate that does not exist), names the request but no entry', async () => {
    const user = await signUpUser(app);
    const res = await app.request('/v3/chat', {
      method: 'POST',
      headers: user.auth,
      json: { gateId: crypto.randomUUID(), data: { messages: [{ role: 'user', content: 'hi' }] } },
    });
    expect(res.status).toBe(404);
    const id = res.headers.get('x-gatehouse-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(((await res.json()) as { error: { requestId?: string } }).error.requestId).toBeUndefined();
    await app.runtime.logs.drain();
    expect((await app.request(`/v1/logs/${id}`, { headers: user.auth })).status).toBe(404);
  });
});

describe('every /v1 and /v3 answer carries x-gatehouse-request-id', () => {
  it('on successes, control-plane reads, unknown routes and unauthenticated calls, each its own', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {});
    const answers = [
      await app.request('/v3/chat', {
        method: 'POST',
        headers: user.auth,
        json: { gateId: gate.id, data: { messages: [{ role: 'user', content: 'hi' }] } },
      }),
      await app.request('/v1/chat/completions', {
        method: 'POST',
        headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
        json: { model: 'gate', messages: [{ role: 'user', content: 'hi' }] },
      }),
      await app.request('/v1/gates', { headers: user.auth }),
      await app.request('/v1/logs', { headers: user.auth }),
      await app.request('/v1/no-such-route', { headers: user.auth }),
      await app.request('/v1/gates'),
      await app.request('/v1/models', { headers: user.auth }),
    ];
    const ids = answers.map((res) => res.headers.get('x-gatehouse-request-id'));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200, 404, 401, 200]);
  });
});
