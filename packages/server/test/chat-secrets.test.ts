/**
 * A provider whose errors echo the credentials it was sent must not hand the gateway's provider
 * key to clients or to the log: answers (plain and streamed, on both chat endpoints), error
 * messages, attempts and the stored provider response all say [REDACTED] instead.
 */
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { logEntriesOf, say } from './support/chat.ts';
import { chunkFrames } from './support/emulators/openai.ts';
import { type RecordedRequest, sseFrame } from './support/emulators/upstream.ts';
import { useEmulators } from './support/emulators/useEmulators.ts';
import { createGate, signUpUser } from './support/factories.ts';

const OPENAI_KEY = 'sk-proj-Secret0penAIKey-4242424242';
const ANTHROPIC_KEY = 'sk-ant-api03-SecretAnthropicKey-77777';
const { openai, anthropic, env } = await useEmulators({
  openai: { apiKey: OPENAI_KEY },
  anthropic: { apiKey: ANTHROPIC_KEY },
});
const app = useTestApp({
  ...env,
  // Nothing listens on the discard port: every connection is refused.
  MISTRAL_API_KEY: 'mistral-key-for-a-dead-host',
  MISTRAL_BASE_URL: 'http://127.0.0.1:9',
});

/** An error body that echoes every header the provider received, as some proxies' errors do. */
const echoing = (status: number) => (request: RecordedRequest) => ({
  type: 'json' as const,
  status,
  body: {
    error: {
      message: `Request rejected; headers were ${JSON.stringify(request.headers)}`,
      type: 'invalid_request_error',
    },
  },
});

function expectNoKey(text: string, where: string) {
  expect(text, where).not.toContain(OPENAI_KEY);
  expect(text, where).not.toContain(ANTHROPIC_KEY);
}

async function expectLogsClean(gateId: string) {
  const entries = await logEntriesOf(app, gateId);
  expect(entries.length).toBeGreaterThan(0);
  const stored = JSON.stringify(entries);
  expectNoKey(stored, 'log entries');
  expect(stored).toContain('[REDACTED]');
}

describe('a provider error that echoes the Authorization header', () => {
  it('reaches neither the /v3/chat answer nor the log, plain or streamed', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini', routingStrategy: 'single' });
    for (const stream of [false, true]) {
      openai.upstream.reply(echoing(401));
      const res = await app.request('/v3/chat', {
        method: 'POST',
        headers: user.auth,
        json: { gateId: gate.id, data: { messages: say('hi'), stream } },
      });
      const text = await res.text();
      expect(res.status, text).toBe(502);
      expect(text).toContain('Request rejected');
      expectNoKey(text, `/v3/chat stream=${stream}`);
    }
    await expectLogsClean(gate.id);
  });

  it('reaches neither the /v1/chat/completions answer nor the log, after a fallback, plain or streamed', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      model: 'openai/gpt-4o-mini',
      routingStrategy: 'fallback',
      fallbackModels: ['anthropic/claude-3-5-haiku-latest'],
    });
    for (const stream of [false, true]) {
      openai.upstream.reply(echoing(503));
      anthropic.upstream.reply(echoing(500));
      const res = await app.request('/v1/chat/completions', {
        method: 'POST',
        headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
        json: { model: 'gate', messages: say('hi'), stream },
      });
      const text = await res.text();
      expect(res.status, text).toBe(502);
      expect(text).toContain('Request rejected');
      expectNoKey(text, `/v1/chat/completions stream=${stream}`);
    }
    await expectLogsClean(gate.id);
  });
});

describe('a stream whose error event echoes the key', () => {
  it('sends the client the error without the key, and logs it without the key', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini', routingStrategy: 'single' });
    openai.upstream.reply((request) => {
      const frames = chunkFrames('openai', request, { content: ['Hel', 'lo'] });
      return {
        type: 'sse',
        frames: [
          ...frames.slice(0, 2),
          sseFrame({
            error: {
              message: `upstream auth ${request.headers.authorization} expired`,
              type: 'server_error',
            },
          }),
        ],
      };
    });
    const res = await app.request('/v3/chat', {
      method: 'POST',
      headers: user.auth,
      json: { gateId: gate.id, data: { messages: say('hi'), stream: true } },
    });
    const text = await res.text();
    expect(text).toContain('expired');
    expectNoKey(text, 'stream');
    await expectLogsClean(gate.id);
  });
});

describe('a provider that cannot be reached', () => {
  it('is "unreachable" to the client and in the log, without the internal address or the system error', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      model: 'mistral/mistral-small-latest',
      routingStrategy: 'single',
    });
    for (const stream of [false, true]) {
      const res = await app.request('/v3/chat', {
        method: 'POST',
        headers: user.auth,
        json: { gateId: gate.id, data: { messages: say('hi'), stream } },
      });
      const text = await res.text();
      expect(res.status, text).toBe(502);
      expect(text).toMatch(/Could not reach the provider \(connection refused\)/);
      // The port as an address would be written (`:9` alone also matches a latency of 9 ms).
      expect(text).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|[a-z0-9]:9\b/);
    }
    const stored = JSON.stringify(await logEntriesOf(app, gate.id));
    expect(stored).toMatch(/connection refused/);
    expect(stored).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
  });
});
