/**
 * Every limit a request passes through holds (issue 24, item 7): an orchestrated request is
 * reserved against the sub-gate that answers, the agent gate it came through and its session, all
 * or none, and its cost is charged to each, so an agent gate's spending is what its sub-gates
 * spent on its behalf. A refusal names the limit that refused.
 */
import { describe, expect, it } from 'vitest';
import { worstCaseCost } from '../src/dataplane/cost.ts';
import { LEDGERS, useTestApp } from './support/app.ts';
import { type NativeError, readGate, say } from './support/chat.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';

describe.each(LEDGERS)('on %s', (_ledger, env) => {
  const app = useTestApp(env);

  type Refusal = NativeError & { error: { details?: Record<string, unknown> } };

  async function orchestrated(user: TestUser, agent: Record<string, unknown>, sub: Record<string, unknown>) {
    const agentGate = await createGate(app, user, {
      name: `agent-${crypto.randomUUID()}`,
      gateType: 'agent',
      agentMode: 'orchestrated',
      orchestration: 'static',
      ...agent,
    });
    const subGate = await createGate(app, user, { name: `writer-${crypto.randomUUID()}`, ...sub });
    const res = await app.request(`/v1/gates/${agentGate.id}/sub-gates`, {
      method: 'POST',
      headers: user.auth,
      json: { subGateId: subGate.id, role: 'writer' },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    return { agent: agentGate, sub: subGate };
  }

  function ask(user: TestUser, agentId: string, content: string, session?: string) {
    return app.request('/v1/chat/completions', {
      method: 'POST',
      headers: {
        ...user.auth,
        'x-gatehouse-gate-id': agentId,
        'x-gatehouse-action': 'writer',
        ...(session && { 'x-gatehouse-session-id': session }),
      },
      json: { model: 'mock/echo', messages: say(content) },
    });
  }

  /** The native error body of a /v1 refusal carries the OpenAI shape: read the gateway's own. */
  async function nativeRefusal(user: TestUser, agentId: string, content: string): Promise<Refusal> {
    const res = await app.request('/v3/chat', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-action': 'writer' },
      json: { gateId: agentId, data: { messages: say(content) } },
    });
    expect(res.status).toBe(402);
    return (await res.json()) as Refusal;
  }

  describe('an orchestrated agent gate with a block limit', () => {
    it('holds its limit over a sub-gate without one, and the refusal names the agent gate', async () => {
      const user = await signUpUser(app);
      const limit = 0.0001;
      const { agent, sub } = await orchestrated(
        user,
        { spendingLimit: limit, spendingEnforcement: 'block' },
        // A cap keeps one request's worst case well inside the agent gate's limit.
        { maxTokens: 10, spendingLimit: null },
      );
      let passed = 0;
      let refused: Response | undefined;
      for (let i = 0; i < 100 && !refused; i++) {
        const res = await ask(user, agent.id, `question ${i}`);
        if (res.status === 200) passed += 1;
        else refused = res;
      }
      expect(passed, await refused?.clone().text()).toBeGreaterThan(0);
      expect(refused?.status, 'some request is refused before 100').toBe(402);
      const body = (await refused?.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('spending_limit_exceeded');
      expect(body.error.message).toContain(`Agent gate "${agent.name}"`);

      // At least as large as the refused one: a smaller request may still fit in what is left.
      const native = await nativeRefusal(user, agent.id, 'one more '.repeat(30));
      expect(native.error.details).toMatchObject({
        scope: 'agent_gate',
        gateId: agent.id,
        gateName: agent.name,
      });

      const spent = (await readGate(app, user, agent.id)).spendingCurrent;
      expect(spent).toBeGreaterThan(0);
      expect(spent).toBeLessThanOrEqual(limit);
      expect((await readGate(app, user, sub.id)).spendingStatus).toBe('active');
    });

    it('never spends past it under 50 concurrent requests; the sub-gate is charged the same, and the holds of refused requests are let go', async () => {
      const user = await signUpUser(app);
      // Every request waits in the mock, so all of them reserve before any settles its cost.
      const content = '[mock:delay=2500] a question of fixed length';
      const maxTokens = 20;
      const worst = worstCaseCost(['mock/echo'], { messages: [{ role: 'user', content }], maxTokens });
      const limit = Number((5 * worst).toFixed(8));
      // The sub-gate has a limit of its own, far above: it is reserved first, so every refusal by
      // the agent gate must release the sub-gate's hold, or the sub-gate's spending would show it.
      const { agent, sub } = await orchestrated(
        user,
        { spendingLimit: limit, spendingEnforcement: 'block' },
        { maxTokens, spendingLimit: 1000 * limit, spendingEnforcement: 'block' },
      );
      const responses = await Promise.all(Array.from({ length: 50 }, () => ask(user, agent.id, content)));
      const ok = responses.filter((r) => r.status === 200);
      const refused = responses.filter((r) => r.status === 402);
      expect(ok.length).toBeGreaterThan(0);
      expect(refused.length).toBeGreaterThan(0);
      expect(ok.length + refused.length).toBe(50);
      for (const r of refused) {
        const body = (await r.json()) as { error: { code: string; message: string } };
        expect(body.error.code).toBe('spending_limit_exceeded');
        expect(body.error.message).toContain(`Agent gate "${agent.name}"`);
      }
      let charged = 0;
      for (const r of ok) charged += Number(r.headers.get('x-gatehouse-cost-usd'));

      const agentAfter = await readGate(app, user, agent.id);
      const subAfter = await readGate(app, user, sub.id);
      expect(agentAfter.spendingCurrent).toBeGreaterThan(0);
      expect(agentAfter.spendingCurrent).toBeLessThanOrEqual(limit);
      expect(subAfter.spendingCurrent).toBeCloseTo(agentAfter.spendingCurrent, 10);
      expect(agentAfter.spendingCurrent).toBeCloseTo(charged, 8);
    });

    it('names the sub-gate when its own limit refuses, and charges the agent gate nothing for it', async () => {
      const user = await signUpUser(app);
      const { agent, sub } = await orchestrated(
        user,
        { spendingLimit: 10, spendingEnforcement: 'block' },
        { spendingLimit: 0, spendingEnforcement: 'block' },
      );
      const native = await nativeRefusal(user, agent.id, 'hello');
      expect(native.error.code).toBe('spending_limit_exceeded');
      expect(native.error.message).toContain(`Sub-gate "${sub.name}"`);
      expect(native.error.details).toMatchObject({ scope: 'sub_gate', gateId: sub.id, role: 'writer' });
      expect((await readGate(app, user, agent.id)).spendingCurrent).toBe(0);
    });
  });
});
