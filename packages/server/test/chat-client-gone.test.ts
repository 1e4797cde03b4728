/**
 * A client that goes away before its answer: the provider call it was waiting for is cancelled
 * (nothing more is generated that nobody will read) and the request is logged as failed. Over a real
 * socket, since that is where a client can leave: the chat routes watch the node response.
 */
import net from 'node:net';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { useSocketServer, useTestApp } from './support/app.ts';
import { logEntriesOf, say } from './support/chat.ts';
import { chunkFrames, startOpenAIEmulator } from './support/emulators/openai.ts';
import { createGate, signUpUser } from './support/factories.ts';

const emulator = await startOpenAIEmulator('openai', 'sk-client-gone');
const app = useTestApp({ OPENAI_API_KEY: emulator.apiKey, OPENAI_BASE_URL: emulator.baseUrl });
afterAll(() => emulator.upstream.close());
const server = useSocketServer(app);

/** The gate's log entries once one is there (bounded: 10 s). */
async function entriesOnceWritten(gateId: string) {
  for (let i = 0; i < 100; i++) {
    const entries = await logEntriesOf(app, gateId);
    if (entries.length > 0) return entries;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return [];
}

describe.each([
  ['/v3/chat', (gateId: string) => ({ gateId, data: { messages: say('[mock:delay=5000] slow') } })],
  ['/v1/chat/completions', () => ({ model: 'mock/echo', messages: say('[mock:delay=5000] slow') })],
])('%s, a client that leaves before the answer', (path, body) => {
  it('cancels the provider call and logs the request as failed', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/echo' });
    const client = new AbortController();
    const request = fetch(`${server.base()}${path}`, {
      method: 'POST',
      headers: { ...user.auth, 'content-type': 'application/json', 'x-gatehouse-gate-id': gate.id },
      body: JSON.stringify(body(gate.id)),
      signal: client.signal,
    });
    // Long enough for the request to reach the mock's 5 s wait, far from its end.
    await new Promise((resolve) => setTimeout(resolve, 500));
    client.abort();
    await expect(request).rejects.toThrow();

    const [entry, ...more] = await entriesOnceWritten(gate.id);
    expect(more).toEqual([]);
    // Had the call gone on, the mock would have answered and the entry would be a success.
    expect(entry).toMatchObject({ success: false, modelUsed: null, costUsd: expect.anything() });
    // A provider may bill a call its client left (it had the prompt, and may have written the
    // answer): the cancelled attempt is charged its worst case, so a block limit holds.
    const [cancelled] = (entry?.attempts ?? []) as { ok: boolean; costUsd: number }[];
    expect(cancelled?.ok).toBe(false);
    expect(cancelled?.costUsd).toBeGreaterThan(0);
    expect(Number(entry?.costUsd)).toBeCloseTo(cancelled?.costUsd ?? 0, 8);
  });
});

describe.each(['/v1/chat/completions', '/v1/messages'])(
  '%s, a client that leaves a stream halfway',
  (path) => {
    it('has had the first words, and stops the provider stream; the request is logged as failed', async () => {
      const user = await signUpUser(app);
      const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini' });
      // Two words, then the provider goes quiet with its stream open, as a slow model does.
      emulator.upstream.reply((request) => ({
        type: 'sse',
        frames: chunkFrames('openai', request, { content: ['Hello', ' there'] }).slice(0, 3),
        ending: 'hang',
      }));
      const client = new AbortController();
      const res = await fetch(`${server.base()}${path}`, {
        method: 'POST',
        headers: { ...user.auth, 'content-type': 'application/json', 'x-gatehouse-gate-id': gate.id },
        body: JSON.stringify({
          model: 'gpt-4o-mini',
          max_tokens: 100,
          stream: true,
          messages: [{ role: 'user', content: 'say hello' }],
        }),
        signal: client.signal,
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(res.headers.get('x-gatehouse-model-used')).toBe('openai/gpt-4o-mini');
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      let text = '';
      while (!text.includes('there')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      expect(text).toContain('Hello');
      client.abort();

      // Had the provider's stream gone on (a stream's deadline is lifted once it answers), no entry.
      const [entry, ...more] = await entriesOnceWritten(gate.id);
      expect(more).toEqual([]);
      expect(entry).toMatchObject({ success: false, modelUsed: null });
      expect(entry?.id).toBe(res.headers.get('x-gatehouse-request-id'));
    });
  },
);

describe('a client that leaves while sending its body', () => {
  it.each(['/v3/chat', '/v1/chat/completions', '/v1/gates'])(
    'on %s is no unexpected error in the server log',
    async (path) => {
      const user = await signUpUser(app);
      const logged = vi.spyOn(console, 'error');
      try {
        const { port } = new URL(server.base());
        const socket = net.connect(Number(port), '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        const auth = user.auth.authorization as string;
        socket.write(
          `POST ${path} HTTP/1.1\r\nHost: x\r\nauthorization: ${auth}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"gateId":`,
        );
        await new Promise((resolve) => setTimeout(resolve, 200));
        socket.destroy();
        // The server notices the closed socket on its next turn; give it a few.
        await new Promise((resolve) => setTimeout(resolve, 300));
        const lines = logged.mock.calls.map((args) => args.map(String).join(' '));
        expect(lines.filter((line) => /unexpected|aborted/i.test(line))).toEqual([]);
      } finally {
        logged.mockRestore();
      }
    },
  );
});
