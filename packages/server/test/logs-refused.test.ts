/**
 * A request the gateway refuses before any provider call (a bad field, a block limit) keeps what
 * its client sent on its log entry (client_request / clientRequest), with the error naming the
 * field: no provider request exists to show why it failed. Bounded, files as notes, provider
 * credentials taken out; an answered request's entry has none.
 */
import { describe, expect, it } from 'vitest';
import { wavFile } from '../src/domain/audioFile.ts';
import { useTestApp } from './support/app.ts';
import { logEntriesOf, say } from './support/chat.ts';
import { createGate, graphql, signUpUser, type TestUser } from './support/factories.ts';

const BOUND = 4096;
const PROVIDER_KEY = 'sk-refused-log-test-0123456789';
const app = useTestApp({
  GATEHOUSE_LOG_CLIENT_BODY_BYTES: String(BOUND),
  // A configured provider's key, which a body may carry and the log must not keep.
  OPENAI_API_KEY: PROVIDER_KEY,
});

type Detail = {
  id: string;
  success: boolean;
  status_code: number;
  error_code: string | null;
  error_message: string | null;
  provider_request: unknown;
  client_request: unknown;
};

/** The gate's one entry, as GET /v1/logs/:id and GraphQL log(id) show it (the same in both). */
async function onlyEntry(user: TestUser, gateId: string): Promise<Detail> {
  const entries = await logEntriesOf(app, gateId);
  expect(entries).toHaveLength(1);
  const id = entries[0]?.id as string;
  const res = await app.request(`/v1/logs/${id}`, { headers: user.auth });
  expect(res.status, await res.clone().text()).toBe(200);
  const rest = (await res.json()) as Detail;
  const gql = await graphql<{ log: Record<string, unknown> }>(
    app,
    user,
    'query($id: ID!) { log(id: $id) { clientRequest providerRequest errorMessage statusCode } }',
    { id },
  );
  expect(gql.errors).toBeUndefined();
  expect(gql.data?.log).toEqual({
    clientRequest: rest.client_request,
    providerRequest: rest.provider_request,
    errorMessage: rest.error_message,
    statusCode: rest.status_code,
  });
  return rest;
}

type Route = {
  path: string;
  /** The body sent, its field `field` refused. */
  body: (gateId: string) => Record<string, unknown>;
  field: string;
  /** Sends the gate in x-gatehouse-gate-id (the /v1 routes). */
  header: boolean;
};

const ROUTES: Route[] = [
  {
    path: '/v3/chat',
    body: (gateId) => ({ gateId, data: { messages: 'hello there' }, metadata: { run: 1 } }),
    field: 'data.messages',
    header: false,
  },
  {
    path: '/v1/chat/completions',
    body: () => ({ model: 'mock/echo', messages: 'hello there', temperature: 0.2 }),
    field: 'messages',
    header: true,
  },
  {
    path: '/v1/messages',
    body: () => ({ model: 'mock/echo', max_tokens: 100, messages: 'hello there', thinking: { type: 'x' } }),
    field: 'messages',
    header: true,
  },
  {
    path: '/v1/responses',
    body: () => ({ model: 'mock/echo', input: 42, store: false }),
    field: 'input',
    header: true,
  },
];

describe('a request refused with a 400 before any provider call', () => {
  for (const route of ROUTES) {
    it(`keeps its client's body and the field at ${route.path}`, async () => {
      const user = await signUpUser(app);
      const gate = await createGate(app, user);
      const body = route.body(gate.id);
      const res = await app.request(route.path, {
        method: 'POST',
        headers: { ...user.auth, ...(route.header && { 'x-gatehouse-gate-id': gate.id }) },
        json: body,
      });
      expect(res.status, await res.clone().text()).toBe(400);
      expect(await res.text()).toContain(route.field);

      const entry = await onlyEntry(user, gate.id);
      expect(entry).toMatchObject({ success: false, status_code: 400, error_code: 'invalid_request' });
      expect(entry.error_message).toContain(`${route.field}:`);
      expect(entry.provider_request).toBeNull();
      expect(entry.client_request).toEqual(body);
    });
  }
});

describe('a request refused by a block limit', () => {
  it('keeps its client’s body with the 402', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { spendingLimit: 0, spendingEnforcement: 'block' });
    const body = { model: 'mock/echo', messages: say('within budget?'), max_tokens: 50 };
    const res = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      json: body,
    });
    expect(res.status).toBe(402);
    const entry = await onlyEntry(user, gate.id);
    expect(entry).toMatchObject({ status_code: 402, error_code: 'spending_limit_exceeded' });
    expect(entry.client_request).toEqual(body);
  });
});

describe('what a refused body keeps', () => {
  it('is cut at the bound, its first bytes kept as text with a note', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const body = { model: 'mock/echo', messages: say(`é${'long words '.repeat(2000)}`), temperature: 'hot' };
    const sent = JSON.stringify(body);
    const res = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      json: body,
    });
    expect(res.status).toBe(400);
    const entry = await onlyEntry(user, gate.id);
    expect(entry.error_message).toContain('temperature:');
    const kept = entry.client_request as { gatehouse: string; text: string };
    expect(kept.gatehouse).toBe(
      `truncated: the body was ${Buffer.byteLength(sent).toLocaleString('en-US')} bytes, the first ${Buffer.byteLength(kept.text).toLocaleString('en-US')} are kept as text`,
    );
    expect(Buffer.byteLength(kept.text)).toBeLessThanOrEqual(BOUND);
    expect(Buffer.byteLength(kept.text)).toBeGreaterThan(BOUND - 4);
    expect(sent.startsWith(kept.text)).toBe(true);
  });

  it('has the providers’ credentials taken out', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      json: { model: 'mock/echo', messages: say(`my key is ${PROVIDER_KEY}`), n: 'two' },
    });
    expect(res.status).toBe(400);
    const entry = await onlyEntry(user, gate.id);
    expect(JSON.stringify(entry.client_request)).not.toContain(PROVIDER_KEY);
    expect(entry.client_request).toMatchObject({ messages: say('my key is [REDACTED]') });
  });

  it('notes a multipart upload’s file by its type and size, with its fields', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { taskType: 'stt', model: 'mock/stt' });
    const wav = wavFile(Buffer.alloc(16_000 * 2), 16_000);
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), 'one.wav');
    form.append('model', gate.id);
    form.append('temperature', 'hot');
    const res = await app.request('/v1/audio/transcriptions', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      body: form,
    });
    expect(res.status, await res.clone().text()).toBe(400);
    const entry = await onlyEntry(user, gate.id);
    expect(entry.error_message).toContain('temperature');
    const kept = entry.client_request as Record<string, unknown>;
    expect(kept).toMatchObject({
      multipart: true,
      fields: { model: gate.id, temperature: 'hot' },
      file: `[audio/wav, ${wav.length.toLocaleString('en-US')} bytes, one.wav, not logged]`,
    });
    expect(JSON.stringify(kept).length).toBeLessThan(1000);
  });
});

describe('an entry that is not a refusal', () => {
  it('has no client body: an answer, and a provider’s failure, show what the provider was sent', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const ok = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      json: { model: 'mock/echo', messages: say('hi') },
    });
    expect(ok.status).toBe(200);
    const answered = await onlyEntry(user, gate.id);
    expect(answered.client_request).toBeNull();
    expect(answered.provider_request).not.toBeNull();

    const failing = await createGate(app, user);
    const failed = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': failing.id },
      json: { model: 'mock/echo', messages: say('[mock:fail=500] hi') },
    });
    expect(failed.status).toBe(502);
    const entry = await onlyEntry(user, failing.id);
    expect(entry.client_request).toBeNull();
    expect(entry.provider_request).not.toBeNull();
  });
});
