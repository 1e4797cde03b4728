/**
 * Spending made clear (issue 29 item 7): a signed webhook alert, exactly once, when an alert_only
 * gate crosses its limit; retried after a failure; every delivery recorded. A real HTTP receiver
 * on this machine; waits poll the delivery row (the retry base is 1 ms), never a clock.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { worstCaseCost } from '../src/dataplane/cost.ts';
import { useTestApp } from './support/app.ts';
import {
  answerOf,
  chat,
  completions,
  logEntriesOf,
  type NativeError,
  type OpenAIError,
  readGate,
} from './support/chat.ts';
import { createGate, graphql, signUpUser, type TestUser } from './support/factories.ts';

type Received = { path: string; headers: IncomingHttpHeaders; body: string };

/** An HTTP receiver that records every call; `answers` are the statuses it gives, in turn (then 200). */
function receiver() {
  const received: Received[] = [];
  const answers = new Map<string, number[]>();
  let server: Server;
  let base = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const status = answers.get(path)?.shift() ?? 200;
        res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'not now');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    received,
    /** A path of its own for one test, answering `statuses` first. */
    url(path: string, statuses: number[] = []) {
      answers.set(path, statuses);
      return `${base}${path}`;
    },
    at: (path: string) => received.filter((r) => r.path === path),
  };
}

type Delivery = {
  id: string;
  gateId: string;
  gateName: string | null;
  url: string;
  payload: string;
  status: 'DELIVERED' | 'PENDING' | 'FAILED';
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: string | null;
};

async function deliveriesOf(app: ReturnType<typeof useTestApp>, user: TestUser, gateId: string) {
  const res = await graphql<{ spendingAlertDeliveries: Delivery[] }>(
    app,
    user,
    `query ($gateId: ID) { spendingAlertDeliveries(gateId: $gateId) {
      id gateId gateName url payload status attempts lastStatus lastError deliveredAt } }`,
    { gateId },
  );
  expect(res.errors).toBeUndefined();
  return res.data?.spendingAlertDeliveries ?? [];
}

/** Polls the gate's deliveries until one is no longer pending (no clock: a bounded number of looks). */
async function settledDelivery(app: ReturnType<typeof useTestApp>, user: TestUser, gateId: string) {
  for (let look = 0; look < 2_000; look++) {
    const [first] = await deliveriesOf(app, user, gateId);
    if (first && first.status !== 'PENDING') return first;
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('the delivery never settled');
}

async function signingSecretOf(app: ReturnType<typeof useTestApp>, user: TestUser): Promise<string> {
  const res = await graphql<{ spendingAlertSettings: { signingSecret: string } }>(
    app,
    user,
    '{ spendingAlertSettings { signingSecret } }',
  );
  expect(res.errors).toBeUndefined();
  return res.data?.spendingAlertSettings.signingSecret as string;
}

/** Whether `r` carries a valid signature of its body by `secret` (as a receiver checks it). */
function signedBy(r: Received, secret: string): boolean {
  const timestamp = String(r.headers['x-gatehouse-timestamp'] ?? '');
  const header = String(r.headers['x-gatehouse-signature'] ?? '');
  if (!/^\d+$/.test(timestamp) || !header.startsWith('sha256=')) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.${r.body}`).digest();
  const given = Buffer.from(header.slice('sha256='.length), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

describe('spending alerts to a webhook', () => {
  const app = useTestApp({ GATEHOUSE_WEBHOOK_RETRY_BASE_MS: '1', GATEHOUSE_WEBHOOK_POLL_MS: '20' });
  const hooks = receiver();

  it('sends exactly one signed alert when simultaneous requests take an alert_only gate over its limit', async () => {
    const user = await signUpUser(app);
    const url = hooks.url('/once');
    const limit = 0.00005;
    const gate = await createGate(app, user, {
      spendingLimit: limit,
      spendingEnforcement: 'alert_only',
      spendingAlertWebhook: url,
    });
    expect(gate.spendingAlertWebhook).toBe(url);
    const responses = await Promise.all(Array.from({ length: 40 }, () => chat(app, user, gate.id)));
    for (const res of responses) expect(res.status).toBe(200);

    const delivery = await settledDelivery(app, user, gate.id);
    expect(delivery).toMatchObject({
      status: 'DELIVERED',
      attempts: 1,
      lastStatus: 200,
      url,
      gateName: gate.name,
    });
    expect(await deliveriesOf(app, user, gate.id)).toHaveLength(1);
    const calls = hooks.at('/once');
    expect(calls).toHaveLength(1);
    const [call] = calls as [Received];
    expect(call.headers['content-type']).toBe('application/json');
    expect(signedBy(call, await signingSecretOf(app, user))).toBe(true);
    expect(signedBy(call, 'another secret')).toBe(false);

    const alert = JSON.parse(call.body) as Record<string, unknown>;
    await app.runtime.logs.drain();
    const crossing = (await logEntriesOf(app, gate.id)).filter((e) => e.spendingWarning);
    expect(crossing).toHaveLength(1);
    expect(alert).toMatchObject({
      type: 'spending.limit_crossed',
      gateId: gate.id,
      gateName: gate.name,
      enforcement: 'alert_only',
      limitUsd: limit,
      period: 'monthly',
      entryId: crossing[0]?.id,
    });
    expect(alert.spentUsd as number).toBeGreaterThanOrEqual(limit);
    expect(Date.parse(alert.crossedAt as string)).not.toBeNaN();
    expect(call.body).toBe(delivery.payload);
    // 40 requests at once, then polling: minutes on a loaded machine, seconds on a quiet one.
  }, 180_000);

  it("retries after the receiver answers 500, to the account's default webhook, and records 2 attempts, delivered", async () => {
    const user = await signUpUser(app);
    const url = hooks.url('/flaky', [500]);
    const set = await graphql<{ setSpendingAlertWebhook: { data: { defaultWebhook: string } } }>(
      app,
      user,
      `mutation ($url: String) { setSpendingAlertWebhook(url: $url) {
        ... on MutationSetSpendingAlertWebhookSuccess { data { defaultWebhook } } } }`,
      { url },
    );
    expect(set.data?.setSpendingAlertWebhook.data.defaultWebhook).toBe(url);
    const gate = await createGate(app, user, { spendingLimit: 0.000001, spendingEnforcement: 'alert_only' });
    await answerOf(await chat(app, user, gate.id));

    const delivery = await settledDelivery(app, user, gate.id);
    expect(delivery).toMatchObject({ status: 'DELIVERED', attempts: 2, lastStatus: 200, url });
    expect(delivery.deliveredAt).not.toBeNull();
    const calls = hooks.at('/flaky');
    expect(calls).toHaveLength(2);
    const secret = await signingSecretOf(app, user);
    for (const call of calls) {
      expect(call.body).toBe(delivery.payload);
      expect(signedBy(call, secret)).toBe(true);
    }
    expect(calls[0]?.headers['x-gatehouse-delivery']).toBe(delivery.id);
  });

  it('records a receiver that never answers 2xx as failed after the attempts allowed, with its last status', async () => {
    const user = await signUpUser(app);
    const url = hooks.url(
      '/down',
      Array.from({ length: 20 }, () => 503),
    );
    const gate = await createGate(app, user, {
      spendingLimit: 0.000001,
      spendingEnforcement: 'alert_only',
      spendingAlertWebhook: url,
    });
    await answerOf(await chat(app, user, gate.id));
    const delivery = await settledDelivery(app, user, gate.id);
    expect(delivery).toMatchObject({
      status: 'FAILED',
      attempts: app.config.webhooks.maxAttempts,
      lastStatus: 503,
      lastError: 'answered HTTP 503',
      deliveredAt: null,
    });
    expect(hooks.at('/down')).toHaveLength(app.config.webhooks.maxAttempts);
  });

  it('refuses a webhook that is not an http(s) URL, naming the field, in REST and GraphQL', async () => {
    const user = await signUpUser(app);
    const res = await app.request('/v1/gates', {
      method: 'POST',
      headers: user.auth,
      json: {
        name: 'hooked',
        model: 'mock/echo',
        taskType: 'chat',
        spendingAlertWebhook: 'ftp://example.com/x',
      },
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain('spendingAlertWebhook');
    const set = await graphql<{ setSpendingAlertWebhook: { __typename: string; fieldErrors?: unknown } }>(
      app,
      user,
      'mutation { setSpendingAlertWebhook(url: "not a url") { __typename } }',
    );
    expect(set.data?.setSpendingAlertWebhook.__typename).toBe('ValidationError');
  });
});

describe('the 402 says which of the two happened', () => {
  const app = useTestApp();

  it('names the limit and one request’s worst case when the limit is below it, on the native and OpenAI routes', async () => {
    const user = await signUpUser(app);
    const maxTokens = 1000;
    const gate = await createGate(app, user, {
      maxTokens,
      spendingLimit: 0.000001,
      spendingEnforcement: 'block',
    });
    const floor = worstCaseCost(['mock/echo'], { messages: [], maxTokens });
    expect(gate.requestWorstCaseUsd).toBeCloseTo(floor, 12);
    expect(floor).toBeGreaterThan(0.000001);

    const native = await chat(app, user, gate.id);
    expect(native.status).toBe(402);
    const body = (await native.json()) as NativeError & { error: { details: Record<string, unknown> } };
    expect(body.error.message).toContain(
      "spending limit of $0.000001 is below this request's worst case of $",
    );
    expect(body.error.details).toMatchObject({
      reason: 'limit_below_request',
      limitUsd: 0.000001,
      spentUsd: 0,
    });
    expect(body.error.details.worstCaseUsd as number).toBeGreaterThan(0.000001);

    const openai = await completions(app, user, gate.id);
    expect(openai.status).toBe(402);
    const error = ((await openai.json()) as OpenAIError).error;
    expect(error.code).toBe('spending_limit_exceeded');
    expect(error.message).toContain("spending limit of $0.000001 is below this request's worst case of $");
    // Not "reached": nothing was spent.
    expect(error.message).not.toContain('has reached');
    expect((await readGate(app, user, gate.id)).spendingCurrent).toBe(0);
  });

  it('counts the gate’s response schema in the worst case it shows, as the reservation does', async () => {
    const user = await signUpUser(app);
    const maxTokens = 16;
    // ~6 kB of schema against 16 tokens of output: the schema is most of what a request can cost.
    const properties = Object.fromEntries(
      Array.from({ length: 60 }, (_, i) => [
        `field_${i}`,
        { type: 'string', description: `What the invoice says about item ${i}, copied word for word.` },
      ]),
    );
    const responseFormatSchema = { type: 'object', properties, required: Object.keys(properties) };
    const gate = await createGate(app, user, {
      maxTokens,
      responseFormatEnabled: true,
      responseFormatType: 'json_schema',
      responseFormatSchema,
      spendingLimit: 0.000001,
      spendingEnforcement: 'block',
    });
    const withoutSchema = worstCaseCost(['mock/echo'], { messages: [], maxTokens });
    const floor = worstCaseCost(['mock/echo'], {
      messages: [],
      maxTokens,
      responseFormat: {
        type: 'json_schema',
        json_schema: { name: 'gate_response', schema: responseFormatSchema, strict: true },
      },
    });
    expect(floor).toBeGreaterThan(10 * withoutSchema);
    expect(gate.requestWorstCaseUsd).toBeCloseTo(floor, 12);

    // The least request the gate can take is refused for a worst case no smaller than the one shown.
    const native = await chat(app, user, gate.id, { messages: [{ role: 'user', content: '' }] });
    expect(native.status).toBe(402);
    const body = (await native.json()) as NativeError & { error: { details: Record<string, unknown> } };
    expect(body.error.details.reason).toBe('limit_below_request');
    expect(body.error.details.worstCaseUsd as number).toBeGreaterThanOrEqual(
      gate.requestWorstCaseUsd as number,
    );
  });

  it('names what was spent and the limit when the limit is reached, on the native and OpenAI routes', async () => {
    const user = await signUpUser(app);
    const maxTokens = 1;
    // Ten native worst cases: above the OpenAI route's too, whose bound counts the body as sent.
    const limit = Number(
      (
        10 * worstCaseCost(['mock/echo'], { messages: [{ role: 'user', content: 'hello' }], maxTokens })
      ).toFixed(8),
    );
    // Spent past the limit while it only alerted, then made to block: the limit is reached.
    const gate = await createGate(app, user, {
      maxTokens,
      spendingLimit: limit,
      spendingEnforcement: 'alert_only',
    });
    for (let i = 0; i < 200 && (await readGate(app, user, gate.id)).spendingCurrent < limit; i++) {
      await answerOf(await chat(app, user, gate.id));
    }
    const spent = (await readGate(app, user, gate.id)).spendingCurrent;
    expect(spent).toBeGreaterThanOrEqual(limit);
    const patched = await app.request(`/v1/gates/${gate.id}`, {
      method: 'PATCH',
      headers: user.auth,
      json: { spendingEnforcement: 'block' },
    });
    expect(patched.status).toBe(200);

    const native = await chat(app, user, gate.id);
    expect(native.status).toBe(402);
    const body = (await native.json()) as NativeError & { error: { details: Record<string, unknown> } };
    expect(body.error.details).toMatchObject({ reason: 'limit_reached', limitUsd: limit });
    expect(body.error.details.spentUsd as number).toBeCloseTo(spent, 8);
    expect(body.error.message).toMatch(
      new RegExp(`has reached its monthly spending limit: \\$[\\d.]+ spent .* of \\$${limit}`),
    );

    const openai = await completions(app, user, gate.id);
    expect(openai.status).toBe(402);
    const error = ((await openai.json()) as OpenAIError).error;
    expect(error.message).toMatch(/has reached its monthly spending limit: \$[\d.]+ spent/);
  });
});
