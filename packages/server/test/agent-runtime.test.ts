/**
 * Agent gates at request time: sessions opened and settled by requests, exact session budgets
 * under concurrency, static and dynamic orchestration over sub-gates, tool visibility, runaway
 * sessions, and the log entries that tie each request to its session and step.
 */
import { describe, expect, it } from 'vitest';
import { worstCaseCost } from '../src/dataplane/cost.ts';
import { useTestApp } from './support/app.ts';
import { logEntriesOf, logEntryOf, type NativeError, say } from './support/chat.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

type Session = {
  status: string;
  requestCount: number;
  spendingCurrent: number;
  toolsCalled: string[];
  subGatesUsed: string[];
  topic: string | null;
};

async function agentGate(user: TestUser, settings: Record<string, unknown> = {}) {
  return createGate(app, user, { gateType: 'agent', agentMode: 'observability', ...settings });
}

async function attach(
  user: TestUser,
  agentId: string,
  subGateId: string,
  role: string,
  extra: Record<string, unknown> = {},
) {
  const res = await app.request(`/v1/gates/${agentId}/sub-gates`, {
    method: 'POST',
    headers: user.auth,
    json: { subGateId, role, description: `does ${role}`, ...extra },
  });
  expect(res.status, await res.clone().text()).toBe(201);
}

function completions(
  user: TestUser,
  gateId: string,
  session: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  return app.request('/v1/chat/completions', {
    method: 'POST',
    headers: { ...user.auth, 'x-gatehouse-gate-id': gateId, 'x-gatehouse-session-id': session, ...headers },
    json: { model: 'mock/echo', ...body },
  });
}

async function sessionOf(user: TestUser, gateId: string, key: string): Promise<Session> {
  const res = await app.request(`/v1/sessions/${encodeURIComponent(key)}?gateId=${gateId}`, {
    headers: user.auth,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Session;
}

const WEATHER = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};
const SEARCH = {
  type: 'function',
  function: { name: 'search', parameters: { type: 'object', properties: {} } },
};

describe('an observability agent gate', () => {
  it('ties an agent loop to one session: tools recorded, the inferred action on each entry', async () => {
    const user = await signUpUser(app);
    const gate = await agentGate(user);
    const first = await completions(user, gate.id, 'loop-1', {
      messages: say('What is the weather in Oslo? [mock:tool=get_weather]'),
      tools: [WEATHER],
    });
    expect(first.status, await first.clone().text()).toBe(200);
    expect(first.headers.get('x-gatehouse-action')).toBe('get_weather');
    const call = ((await first.json()) as { choices: { message: { tool_calls: { id: string }[] } }[] })
      .choices[0]?.message.tool_calls[0];
    const second = await completions(user, gate.id, 'loop-1', {
      messages: [
        { role: 'user', content: 'What is the weather in Oslo? [mock:tool=get_weather]' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: call?.id,
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: call?.id, content: '12°C, rain' },
      ],
      tools: [WEATHER],
    });
    expect(second.status).toBe(200);
    expect(second.headers.get('x-gatehouse-action')).toBe('respond');

    const session = await sessionOf(user, gate.id, 'loop-1');
    expect(session).toMatchObject({ status: 'active', requestCount: 2, toolsCalled: ['get_weather'] });
    expect(session.topic).toContain('What is the weather in Oslo?');
    const entries = await logEntriesOf(app, gate.id);
    expect(entries.map((e) => [e.sessionId, e.inferredAction])).toEqual([
      ['loop-1', 'get_weather'],
      ['loop-1', 'respond'],
    ]);
    expect(new Set(entries.map((e) => e.gateSessionId)).size).toBe(1);
  });

  it('never spends past a session budget under 100 concurrent requests', async () => {
    const user = await signUpUser(app);
    const content = 'a question of fixed length';
    const maxTokens = 50;
    const worst = worstCaseCost(['mock/echo'], { messages: [{ role: 'user', content }], maxTokens });
    const N = 6;
    const limit = Number((N * worst).toFixed(8));
    const gate = await agentGate(user, { maxTokens, sessionSpendingLimit: limit });
    const responses = await Promise.all(
      Array.from({ length: 100 }, () => completions(user, gate.id, 'budgeted', { messages: say(content) })),
    );
    const passed = responses.filter((r) => r.status === 200).length;
    const refused = responses.filter((r) => r.status === 402);
    expect(passed).toBeGreaterThan(0);
    // N fit at their worst case; a few more may once earlier ones settle below it. What
    // must hold is the spending, below, and that most were refused.
    expect(passed).toBeLessThan(100 / 2);
    expect(passed + refused.length).toBe(100);
    for (const r of refused) {
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('session_budget_exceeded');
    }
    const session = await sessionOf(user, gate.id, 'budgeted');
    expect(session.spendingCurrent).toBeLessThanOrEqual(limit);
    expect(session.requestCount).toBe(passed);
  });

  it('marks a session runaway when a request comes after its end, and on five identical tool calls in a row', async () => {
    const user = await signUpUser(app);
    const gate = await agentGate(user);
    expect((await completions(user, gate.id, 'ended', { messages: say('hi') })).status).toBe(200);
    const end = await app.request(`/v1/sessions/ended/end?gateId=${gate.id}`, {
      method: 'POST',
      headers: user.auth,
    });
    expect(end.status, await end.clone().text()).toBe(200);
    const after = await completions(user, gate.id, 'ended', { messages: say('still here') });
    expect(after.status).toBe(200);
    expect(after.headers.get('x-gatehouse-session-status')).toBe('runaway');
    expect((await sessionOf(user, gate.id, 'ended')).status).toBe('runaway');

    for (let i = 1; i <= 5; i++) {
      const res = await completions(user, gate.id, 'looping', {
        messages: say('again [mock:tool=get_weather]'),
        tools: [WEATHER],
      });
      expect(res.headers.get('x-gatehouse-session-status'), `call ${i}`).toBe(i < 5 ? 'active' : 'runaway');
    }
  });

  it('keeps hidden tools from the provider, and fails an answer that calls one', async () => {
    const user = await signUpUser(app);
    const gate = await agentGate(user, { visibleTools: ['get_weather'] });
    const res = await completions(user, gate.id, 'tools', { messages: say('hi'), tools: [WEATHER, SEARCH] });
    expect(res.status).toBe(200);
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    const sent = entry.providerRequest as { tools?: { function: { name: string } }[] };
    expect(sent.tools?.map((t) => t.function.name)).toEqual(['get_weather']);
    expect(entry.hiddenTools).toEqual(['search']);

    // Only hidden tools: none reaches the model, so the mock cannot be asked to call one.
    const onlyHidden = await completions(user, gate.id, 'tools', {
      messages: say('search please [mock:tool=search]'),
      tools: [SEARCH],
    });
    expect(onlyHidden.status).toBe(200);
    const hiddenEntry = await logEntryOf(app, onlyHidden.headers.get('x-gatehouse-request-id'));
    expect((hiddenEntry.providerRequest as { tools?: unknown }).tools).toBeUndefined();
  });
});

describe('an orchestrated agent gate', () => {
  async function orchestrated(user: TestUser, orchestration: 'static' | 'dynamic') {
    const agent = await agentGate(user, { agentMode: 'orchestrated', orchestration });
    const writer = await createGate(app, user, {
      name: `writer-${crypto.randomUUID()}`,
      model: 'mock/smart',
    });
    const checker = await createGate(app, user, {
      name: `checker-${crypto.randomUUID()}`,
      model: 'mock/fast',
    });
    await attach(user, agent.id, writer.id, 'writer');
    await attach(user, agent.id, checker.id, 'checker');
    return { agent, writer, checker };
  }

  it('statically answers with the sub-gate the action names, and refuses an unknown role listing the roles', async () => {
    const user = await signUpUser(app);
    const { agent, checker } = await orchestrated(user, 'static');
    const res = await completions(
      user,
      agent.id,
      'static-1',
      { messages: say('check this') },
      { 'x-gatehouse-action': 'checker' },
    );
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as { model: string }).model).toBe('mock/fast');
    expect(res.headers.get('x-gatehouse-action')).toBe('checker');
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect(entry).toMatchObject({ gateId: checker.id, inferredAction: 'checker', sessionId: 'static-1' });

    const unknown = await completions(
      user,
      agent.id,
      'static-1',
      { messages: say('x') },
      { 'x-gatehouse-action': 'painter' },
    );
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toMatch(
      /writer, checker/,
    );
    const none = await completions(user, agent.id, 'static-1', { messages: say('x') });
    expect(none.status).toBe(400);

    const session = await sessionOf(user, agent.id, 'static-1');
    expect(session.subGatesUsed).toEqual(['checker']);

    // Deleting the sub-gate detaches it: its role is refused from then on.
    expect(
      (await app.request(`/v1/gates/${checker.id}`, { method: 'DELETE', headers: user.auth })).status,
    ).toBe(204);
    const gone = await completions(
      user,
      agent.id,
      'static-1',
      { messages: say('x') },
      { 'x-gatehouse-action': 'checker' },
    );
    expect(gone.status).toBe(400);
  });

  it('dynamically lets the agent gate’s model pick the role, logging both calls in the session', async () => {
    const user = await signUpUser(app);
    const { agent, writer } = await orchestrated(user, 'dynamic');
    const res = await completions(user, agent.id, 'dynamic-1', {
      messages: say('draft a poem [mock:role=writer]'),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-gatehouse-action')).toBe('writer');
    expect(((await res.json()) as { model: string }).model).toBe('mock/smart');

    const routed = await logEntriesOf(app, agent.id);
    expect(routed.map((e) => e.inferredAction)).toEqual(['route']);
    const answered = await logEntriesOf(app, writer.id);
    expect(answered.map((e) => e.inferredAction)).toEqual(['writer']);
    expect(routed[0]?.gateSessionId).toBeTruthy();
    expect(answered[0]?.gateSessionId).toBe(routed[0]?.gateSessionId);
    const session = await sessionOf(user, agent.id, 'dynamic-1');
    expect(session.requestCount).toBe(2);
    expect(session.spendingCurrent).toBeCloseTo(Number(routed[0]?.costUsd) + Number(answered[0]?.costUsd), 8);
  });

  it('refuses a session id that is not 1–128 printable characters, naming the header', async () => {
    const user = await signUpUser(app);
    const gate = await agentGate(user);
    const res = await completions(user, gate.id, 'x'.repeat(129), { messages: say('hi') });
    expect(res.status).toBe(400);
    expect(((await res.json()) as NativeError & { error: { param?: string } }).error).toMatchObject({
      param: 'x-gatehouse-session-id',
    });
  });
});
