/**
 * Orchestration against a local server speaking OpenAI's chat-completions format: the dynamic
 * router's structured-output request and the sub-gate's answer both go there as OpenAI requests,
 * and tools an agent gate hides never reach it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { say } from './support/chat.ts';
import { createGate, signUpUser } from './support/factories.ts';
import { startFakeOpenAI } from './support/upstream.ts';

const upstream = await startFakeOpenAI();
const app = useTestApp({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: upstream.url });
afterAll(() => upstream.close());

const tool = (name: string) => ({
  type: 'function',
  function: { name, parameters: { type: 'object', properties: {} } },
});

describe('agent gates on an OpenAI-format upstream', () => {
  it('routes dynamically by the model’s structured answer, then answers with the sub-gate, hiding tools', async () => {
    const user = await signUpUser(app);
    const agent = await createGate(app, user, {
      model: 'gpt-4o-mini',
      gateType: 'agent',
      agentMode: 'orchestrated',
      orchestration: 'dynamic',
    });
    const writer = await createGate(app, user, {
      name: `writer-${crypto.randomUUID()}`,
      model: 'gpt-4o-mini',
    });
    const checker = await createGate(app, user, { name: `checker-${crypto.randomUUID()}`, model: 'gpt-4o' });
    for (const [gate, role, visibleTools] of [
      [writer, 'writer', null],
      [checker, 'checker', ['lint']],
    ] as const) {
      const res = await app.request(`/v1/gates/${agent.id}/sub-gates`, {
        method: 'POST',
        headers: user.auth,
        json: { subGateId: gate.id, role, description: `the ${role}`, visibleTools },
      });
      expect(res.status, await res.clone().text()).toBe(201);
    }
    // The router's request asks for a JSON role; the sub-gate's gets a plain answer.
    upstream.reply((request) => (request.response_format ? '{"role":"checker"}' : 'Looks right.'));
    const before = upstream.received.length;
    const res = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': agent.id, 'x-gatehouse-session-id': 'upstream-1' },
      json: {
        model: 'gate',
        messages: say('Please check my essay'),
        tools: [tool('lint'), tool('delete_all')],
      },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-gatehouse-action')).toBe('checker');
    // The sub-gate's OpenAI model answered the forwarded body as OpenAI does; the header names it.
    expect(res.headers.get('x-gatehouse-model-used')).toBe('openai/gpt-4o');
    expect(((await res.json()) as { model: string }).model).toBe('gpt-4o');

    const [router, answer] = upstream.received.slice(before);
    expect(router?.model).toBe('gpt-4o-mini');
    expect(router?.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { schema: { properties: { role: { enum: ['writer', 'checker'] } } } },
    });
    expect(JSON.stringify(router?.messages)).toContain('checker: the checker');
    expect(answer?.model).toBe('gpt-4o');
    const sentTools = (answer?.tools ?? []) as { function: { name: string } }[];
    expect(sentTools.map((t) => t.function.name)).toEqual(['lint']);
    expect(upstream.received.slice(before)).toHaveLength(2);
  });
});
