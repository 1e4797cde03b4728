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
      const logged = await entry(user, res.headers.get('x-gatehouse-request-id'));
      expect(logged).toMatchObject({ success: false, status_code: status });
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
    expect(((await openai.clone().json()) as { error: { type: string } }).error.type).toBe(
      'insufficient_quota',
    );
    expect((await entry(user, openai.headers.get('x-gatehouse-request-id'))).status_code).toBe(402);

    const anthropic = await app.request('/v1/messages', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': blocked.id },
      json: { model: 'claude-x', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(anthropic.status).toBe(402);
    expect(((await anthropic.clone().json()) as { type: string }).type).toBe('error');
    expect((await entry(user, anthropic.headers.get('x-gatehouse-request-id'))).status_code).toBe(402);
  });

  it('is absent where no entry was left: a gate that does not exist', async () => {
    const user = await signUpUser(app);
    const res = await app.request('/v3/chat', {
      method: 'POST',
      headers: user.auth,
      json: { gateId: crypto.randomUUID(), data: { messages: [{ role: 'user', content: 'hi' }] } },
    });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-gatehouse-request-id')).toBeNull();
  });
});
