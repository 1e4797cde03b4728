import { describe, expect, it } from 'vitest';
import { worstCaseCost } from '../src/dataplane/cost.ts';
import { LEDGERS, useTestApp } from './support/app.ts';
import {
  answerOf,
  chat,
  completions,
  logEntriesOf,
  logEntryOf,
  type NativeError,
  type OpenAIError,
  readGate,
  say,
} from './support/chat.ts';
import { createGate, signUpUser } from './support/factories.ts';

describe.each(LEDGERS)('on %s', (_ledger, env) => {
  const app = useTestApp(env);

  describe('an alert_only spending limit', () => {
    it('warns on the request that crosses it, marks that log entry once, and lets every request pass', async () => {
      const user = await signUpUser(app);
      const limit = 0.00002;
      const gate = await createGate(app, user, { spendingLimit: limit, spendingEnforcement: 'alert_only' });
      let spent = 0;
      let crossings = 0;
      for (let i = 0; i < 6; i++) {
        const res = await chat(app, user, gate.id, { messages: say(`question number ${i}`) });
        const answer = await answerOf(res);
        const before = spent;
        spent += answer.costUsd;
        const crossed = before < limit && spent >= limit;
        const over = spent >= limit;
        if (crossed) crossings += 1;
        const warning = res.headers.get('x-gatehouse-spending-warning');
        if (over) expect(warning, `request ${i}, $${spent} spent`).toBeTruthy();
        else expect(warning, `request ${i}, $${spent} spent`).toBeNull();
        const entry = await logEntryOf(app, answer.id);
        expect(entry.spendingWarning, `request ${i}`).toBe(crossed);
      }
      expect(crossings, 'the test crosses the limit exactly once').toBe(1);
      const after = await readGate(app, user, gate.id);
      expect(after.spendingCurrent).toBeCloseTo(spent, 8);
      expect(after.spendingCurrent).toBeGreaterThan(limit);
      expect(after.spendingStatus).toBe('active');
    });

    it('marks exactly one log entry when many simultaneous requests cross it together', async () => {
      const user = await signUpUser(app);
      const gate = await createGate(app, user, { spendingLimit: 0.00005, spendingEnforcement: 'alert_only' });
      const responses = await Promise.all(Array.from({ length: 40 }, () => chat(app, user, gate.id)));
      for (const res of responses) expect(res.status).toBe(200);
      const entries = await logEntriesOf(app, gate.id);
      expect(entries).toHaveLength(40);
      expect(entries.filter((e) => e.spendingWarning)).toHaveLength(1);
      expect((await readGate(app, user, gate.id)).spendingCurrent).toBeGreaterThan(0.00005);
    });

    it('marks the stream final event of the crossing request', async () => {
      const user = await signUpUser(app);
      const gate = await createGate(app, user, {
        spendingLimit: 0.000001,
        spendingEnforcement: 'alert_only',
      });
      const res = await chat(app, user, gate.id, { stream: true });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toMatch(/"spendingWarning":true/);
    });
  });

  describe('a block spending limit', () => {
    it('lets at most N of 200 simultaneous requests through when the limit covers N; a request that fits in what is left still passes', async () => {
      const user = await signUpUser(app);
      const N = 20;
      // Every request waits in the mock, so all of them reserve before any settles its cost.
      const content = '[mock:delay=2500] how much?';
      const maxTokens = 100;
      // What the gateway reserves: the merged params it builds (no system prompt, the gate's cap).
      const worst = worstCaseCost(['mock/echo'], { messages: [{ role: 'user', content }], maxTokens });
      expect(worst).toBeGreaterThan(0);
      const limit = Number((N * worst).toFixed(8));
      const gate = await createGate(app, user, {
        model: 'mock/echo',
        maxTokens,
        spendingLimit: limit,
        spendingEnforcement: 'block',
      });

      const responses = await Promise.all(
        Array.from({ length: 200 }, () => chat(app, user, gate.id, { messages: say(content) })),
      );
      const statuses = responses.map((r) => r.status);
      const passed = statuses.filter((s) => s === 200).length;
      const refused = responses.filter((r) => r.status === 402);
      expect(passed, `statuses: ${[...new Set(statuses)]}`).toBeGreaterThan(0);
      expect(passed).toBeLessThanOrEqual(N);
      expect(passed + refused.length).toBe(200);
      for (const res of refused) {
        const body = (await res.json()) as NativeError;
        expect(body.error.code).toBe('spending_limit_exceeded');
      }
      let charged = 0;
      for (const res of responses.filter((r) => r.status === 200))
        charged += ((await res.json()) as { costUsd: number }).costUsd;

      const after = await readGate(app, user, gate.id);
      expect(after.spendingCurrent).toBeLessThanOrEqual(limit);
      expect(after.spendingCurrent).toBeCloseTo(charged, 8);
      // Answers cost less than their worst case: the limit is not reached, so the gate is not suspended.
      expect(after.spendingCurrent).toBeLessThan(limit);
      expect(after.spendingStatus).toBe('active');

      // Each refused request is logged against the gate as a 402.
      const entries = await logEntriesOf(app, gate.id);
      expect(entries).toHaveLength(200);
      expect(
        entries.filter(
          (e) => e.statusCode === 402 && !e.success && e.errorCode === 'spending_limit_exceeded',
        ),
      ).toHaveLength(200 - passed);

      // What the answers left unspent is still there for a request that fits in it.
      const tiny = await chat(app, user, gate.id, { messages: say('tiny') });
      expect(tiny.status, await tiny.clone().text()).toBe(200);
    });

    it('refuses, one request at a time, the first request whose worst case would pass the limit', async () => {
      const user = await signUpUser(app);
      const worst = worstCaseCost(['mock/echo'], {
        messages: [{ role: 'user', content: 'hi' }],
        maxTokens: 50,
      });
      const limit = Number((1.2 * worst).toFixed(8));
      const gate = await createGate(app, user, {
        maxTokens: 50,
        spendingLimit: limit,
        spendingEnforcement: 'block',
      });
      let answered = 0;
      for (let i = 0; i < 50; i++) {
        const spent = (await readGate(app, user, gate.id)).spendingCurrent;
        const res = await chat(app, user, gate.id, { messages: say('hi') });
        if (spent + worst <= limit) {
          expect(res.status, `request ${i} with $${spent} spent`).toBe(200);
          answered += 1;
        } else {
          expect(res.status, `request ${i} with $${spent} spent`).toBe(402);
          expect(((await res.json()) as NativeError).error.message).toMatch(/exceeds what is left/);
          break;
        }
      }
      // Answers cost far less than their worst case, so several fit before the refusal.
      expect(answered).toBeGreaterThan(1);
      expect(answered).toBeLessThan(50);
      const after = await readGate(app, user, gate.id);
      expect(after.spendingCurrent).toBeLessThanOrEqual(limit);
      // Refused as too big for what is left, not for a reached limit: the gate is not suspended.
      expect(after.spendingStatus).toBe('active');
    });

    it('counts a response format’s schema in the worst case: a large one is refused, a small one passes', async () => {
      const user = await signUpUser(app);
      const maxTokens = 50;
      const format = (n: number) => ({
        type: 'json_schema' as const,
        json_schema: {
          name: 'answer',
          schema: {
            type: 'object',
            properties: Object.fromEntries(
              Array.from({ length: n }, (_, i) => [
                `field_${i}`,
                { type: 'string', description: 'd'.repeat(200) },
              ]),
            ),
          },
        },
      });
      const worst = (fields: number) =>
        worstCaseCost(['mock/echo'], {
          messages: [{ role: 'user', content: 'hi' }],
          maxTokens,
          responseFormat: format(fields),
        });
      const limit = Number((2 * worst(1)).toFixed(8));
      // ~50 kB of schema: far more than the limit leaves once it is read as prompt.
      expect(worst(200)).toBeGreaterThan(limit);
      const gate = await createGate(app, user, {
        maxTokens,
        spendingLimit: limit,
        spendingEnforcement: 'block',
      });

      const refused = await chat(app, user, gate.id, { messages: say('hi'), responseFormat: format(200) });
      expect(refused.status).toBe(402);
      expect(((await refused.json()) as NativeError).error.code).toBe('spending_limit_exceeded');
      const small = await chat(app, user, gate.id, { messages: say('hi'), responseFormat: format(1) });
      expect(small.status, await small.clone().text()).toBe(200);
    });

    it('refuses a request too big for what is left with its own 402, and keeps the gate active for smaller ones', async () => {
      const user = await signUpUser(app);
      const maxTokens = 50;
      const small = worstCaseCost(['mock/echo'], { messages: [{ role: 'user', content: 'hi' }], maxTokens });
      const limit = Number((10 * small).toFixed(8));
      const big = 'x'.repeat(200_000);
      const bigWorst = worstCaseCost(['mock/echo'], {
        messages: [{ role: 'user', content: big }],
        maxTokens,
      });
      expect(bigWorst).toBeGreaterThan(limit);
      const gate = await createGate(app, user, {
        maxTokens,
        spendingLimit: limit,
        spendingEnforcement: 'block',
      });

      const refused = await chat(app, user, gate.id, { messages: say(big) });
      expect(refused.status).toBe(402);
      const body = (await refused.json()) as NativeError & { error: { details?: Record<string, unknown> } };
      expect(body.error.code).toBe('spending_limit_exceeded');
      // The limit itself is below this request's worst case: the 402 says so, with both figures.
      expect(body.error.message).toContain(`spending limit of $${limit} is below this request's worst case`);
      expect(body.error.message).toContain(gate.name);
      expect(body.error.details).toMatchObject({
        scope: 'gate',
        gateId: gate.id,
        reason: 'limit_below_request',
        limitUsd: limit,
        remainingUsd: limit,
        spentUsd: 0,
      });
      expect(body.error.details?.worstCaseUsd).toBeCloseTo(bigWorst, 10);
      // Refused before any provider was called: nothing spent, the limit not reached, the gate active.
      const after = await readGate(app, user, gate.id);
      expect(after.spendingCurrent).toBe(0);
      expect(after.spendingStatus).toBe('active');
      expect((await app.db.prisma.gate.findUniqueOrThrow({ where: { id: gate.id } })).spendingStatus).toBe(
        'active',
      );
      // A request that fits goes on.
      await answerOf(await chat(app, user, gate.id, { messages: say('hi') }));
      expect((await readGate(app, user, gate.id)).spendingStatus).toBe('active');
    });

    it('answers 402 in the OpenAI error shape on the compatible endpoint', async () => {
      const user = await signUpUser(app);
      const gate = await createGate(app, user, { spendingLimit: 0, spendingEnforcement: 'block' });
      const res = await completions(app, user, gate.id);
      expect(res.status).toBe(402);
      expect(((await res.json()) as OpenAIError).error).toMatchObject({
        code: 'spending_limit_exceeded',
        type: 'insufficient_quota',
      });
      expect((await readGate(app, user, gate.id)).spendingStatus).toBe('suspended');
    });

    it('resumes when the limit is lifted', async () => {
      const user = await signUpUser(app);
      const gate = await createGate(app, user, { spendingLimit: 0, spendingEnforcement: 'block' });
      expect((await chat(app, user, gate.id)).status).toBe(402);
      const patched = await app.request(`/v1/gates/${gate.id}`, {
        method: 'PATCH',
        headers: user.auth,
        json: { spendingLimit: null },
      });
      expect(patched.status).toBe(200);
      await answerOf(await chat(app, user, gate.id));
    });
  });
});
