import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { chat, logEntriesOf, say } from './support/chat.ts';
import { createGate, signUpUser } from './support/factories.ts';

const app = useTestApp();

describe('bodies that are JSON but not a request', () => {
  it('answers null on the OpenAI-compatible endpoint with a 400 in OpenAI shape, not a 500', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id, 'content-type': 'application/json' },
      body: 'null',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
  });
});

describe('a response schema the gateway cannot compile', () => {
  it('is a 400 naming responseFormat, before any model is called or paid for', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { routingStrategy: 'fallback', fallbackModels: ['mock/fast'] });
    const res = await chat(app, user, gate.id, {
      messages: say('hi'),
      responseFormat: {
        type: 'json_schema',
        json_schema: { name: 'broken', schema: { type: 'no-such-type' } },
      },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: { code: 'invalid_request', details: { issues: [{ path: 'responseFormat' }] } },
    });
    const [entry] = await logEntriesOf(app, gate.id);
    expect(entry).toMatchObject({ success: false, statusCode: 400, attempts: [] });
  });
});
