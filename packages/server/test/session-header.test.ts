/**
 * A session id sent to a standard gate is recorded in its log entries on every route: by the
 * x-gatehouse-session-id header anywhere, or a /v3 body's sessionId.
 */
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { logEntryOf, say } from './support/chat.ts';
import { createGate, signUpUser } from './support/factories.ts';

const app = useTestApp();

describe('the session header on a standard gate', () => {
  it('is recorded on the native, OpenAI, Anthropic, Responses and task routes', async () => {
    const user = await signUpUser(app);
    const chatGate = await createGate(app, user);
    const embedGate = await createGate(app, user, { taskType: 'embeddings', model: 'mock/embed' });
    const headers = { ...user.auth, 'x-gatehouse-session-id': 'run-42', 'x-gatehouse-gate-id': chatGate.id };
    const calls: [string, unknown][] = [
      ['/v3/chat', { gateId: chatGate.id, data: { messages: say('hi') } }],
      ['/v1/chat/completions', { model: 'mock/echo', messages: say('hi') }],
      ['/v1/messages', { model: 'mock/echo', max_tokens: 50, messages: say('hi') }],
      ['/v1/responses', { model: 'mock/echo', input: 'hi' }],
      ['/v3/embeddings', { gateId: embedGate.id, data: { input: 'hi' } }],
    ];
    for (const [path, json] of calls) {
      const res = await app.request(path, { method: 'POST', headers, json });
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
      const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
      expect(entry.sessionId, path).toBe('run-42');
    }
    // Without the header, a /v3 body's sessionId still names it.
    const res = await app.request('/v3/chat', {
      method: 'POST',
      headers: user.auth,
      json: { gateId: chatGate.id, data: { messages: say('hi') }, sessionId: 'from-body' },
    });
    expect((await logEntryOf(app, res.headers.get('x-gatehouse-request-id'))).sessionId).toBe('from-body');
  });
});
