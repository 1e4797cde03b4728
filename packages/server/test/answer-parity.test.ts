import { afterAll, describe, expect, it } from 'vitest';
import { useSocketServer, useTestApp } from './support/app.ts';
import { say } from './support/chat.ts';
import { completion, startOpenAIEmulator } from './support/emulators/openai.ts';
import { createGate, signUpUser } from './support/factories.ts';

const emulator = await startOpenAIEmulator('openai', 'sk-parity');
const app = useTestApp({ OPENAI_API_KEY: emulator.apiKey, OPENAI_BASE_URL: emulator.baseUrl });
afterAll(() => emulator.upstream.close());
const server = useSocketServer(app);

/** Headers a transport sets for itself (the socket's framing, the clock), left out of the comparison. */
const TRANSPORT = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

/** Status, headers and body, with the request's id and the clock's seconds made constant. */
async function seen(res: Response) {
  const id = res.headers.get('x-gatehouse-request-id') ?? '';
  expect(id).not.toBe('');
  const headers = Object.fromEntries(
    [...res.headers]
      .filter(([name]) => !TRANSPORT.has(name))
      .map(([name, value]) => [name, value.replaceAll(id, '<id>')]),
  );
  const text = await res.text();
  const body = text
    .replaceAll(id, '<id>')
    .replace(/"(created|created_at|latencyMs)":\d+/g, '"$1":0')
    .replace(/"msg_[0-9a-f]{32}"/g, '"msg_<id>"');
  return { status: res.status, headers, body };
}

type Case = { path: string; model: string; forwarded: boolean; body: (gateId: string) => unknown };
const cases: Case[] = [
  {
    path: '/v1/chat/completions',
    model: 'openai/gpt-4o-mini',
    forwarded: true,
    body: () => ({ model: 'gpt-4o-mini', messages: say('Say hello') }),
  },
  {
    path: '/v1/chat/completions',
    model: 'mock/echo',
    forwarded: false,
    body: () => ({ model: 'gate', messages: say('Say «hello» ✓') }),
  },
  {
    path: '/v1/messages',
    model: 'mock/echo',
    forwarded: false,
    body: () => ({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: say('Say hello') }),
  },
  {
    path: '/v1/responses',
    model: 'mock/echo',
    forwarded: false,
    body: () => ({ model: 'gate', input: 'Say hello' }),
  },
  {
    path: '/v3/chat',
    model: 'mock/echo',
    forwarded: false,
    body: (gateId) => ({ gateId, data: { messages: say('Say hello') } }),
  },
];

describe.each(cases)('$path on $model', ({ path, model, forwarded, body }) => {
  it('answers the same over a socket as through app.request', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model });
    const headers = { ...user.auth, 'content-type': 'application/json', 'x-gatehouse-gate-id': gate.id };
    const json = JSON.stringify(body(gate.id));
    if (forwarded) {
      // The provider's answer, with members and spacing of its own, passes through as it came.
      const answer = `${JSON.stringify(completion('openai', { content: 'Hello «there»' }), null, 1)}\n`;
      const reply = { type: 'text' as const, contentType: 'application/json', text: answer };
      emulator.upstream.reply(reply, reply);
    }
    const overSocket = await seen(
      await fetch(`${server.base()}${path}`, { method: 'POST', headers, body: json }),
    );
    const inProcess = await seen(await app.request(path, { method: 'POST', headers, body: json }));
    expect(overSocket.status).toBe(200);
    expect(overSocket).toEqual(inProcess);
    expect(overSocket.headers['content-type']).toMatch(/^application\/json/);
    if (forwarded) expect(overSocket.body).toContain('"Hello «there»"');
  });
});
