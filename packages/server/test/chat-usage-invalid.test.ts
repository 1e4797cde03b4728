/**
 * A provider's usage figures are checked before they become money: an answer that reports usage
 * no bill can have (negative, not a number, Infinity, 2e16 tokens) is charged the worst case of
 * the model that answered and says so in its log entry; an answer that reports none is estimated,
 * never above that worst case. Under 200 concurrent requests through a block gate the limit holds,
 * the ledger equals what the entries were charged, and every request has its entry. A gate whose
 * spending cannot be written holds up no other gate's, and shutdown drains the logs and never throws.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { DEFAULT_MAX_OUTPUT_TOKENS, worstCaseCost } from '../src/dataplane/cost.ts';
import { createSqlLedger, isRefusal, type Reserved } from '../src/dataplane/ledger.ts';
import { LocalLedger } from '../src/dataplane/localLedger.ts';
import { sql } from '../src/db/client.ts';
import { createRuntime } from '../src/runtime.ts';
import { databaseKind, useTestApp } from './support/app.ts';
import { logEntriesOf, readGate, say } from './support/chat.ts';
import { completion, startOpenAIEmulator } from './support/emulators/openai.ts';
import type { Reply } from './support/emulators/upstream.ts';
import { createGate, signUpUser } from './support/factories.ts';

const emulator = await startOpenAIEmulator('openai', 'sk-usage-test');
const app = useTestApp({ OPENAI_API_KEY: emulator.apiKey, OPENAI_BASE_URL: emulator.baseUrl });
afterAll(() => emulator.upstream.close());

const MODEL = 'openai/gpt-4o-mini';
const QUESTION = 'how much did this cost?';
/** Far beyond the output cap the request was sent: an estimate of it passes the reservation. */
const LONG_ANSWER = 'word '.repeat(40_000);
const GOOD_USAGE = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 };

/** A chat.completion with `usage` as given (undefined: none), as raw JSON text; INF becomes 1e999. */
function answerWith(usage: unknown, content: string): Reply {
  const { usage: _, ...body } = completion('openai', { content });
  const text = JSON.stringify(usage === undefined ? body : { ...body, usage }).replaceAll('"INF"', '1e999');
  return { type: 'text', contentType: 'application/json', text };
}

/** Every second answer reports `bad` usage (and a long answer); the others honest usage. */
function alternating(bad: unknown, n: number): Reply[] {
  return Array.from({ length: n }, (_, i) =>
    i % 2 === 1 ? answerWith(bad, LONG_ANSWER) : answerWith(GOOD_USAGE, 'short'),
  );
}

async function race(gateId: string, auth: Record<string, string>, n: number) {
  return Promise.all(
    Array.from({ length: n }, () =>
      app.request('/v3/chat', {
        method: 'POST',
        headers: auth,
        json: { gateId, data: { messages: say(QUESTION) } },
      }),
    ),
  );
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

const CASES: { name: string; usage: unknown; invalid: boolean }[] = [
  {
    name: 'negative',
    usage: { prompt_tokens: -1e7, completion_tokens: 7, total_tokens: -9_999_993 },
    invalid: true,
  },
  {
    name: 'NaN (a string)',
    usage: { prompt_tokens: 12, completion_tokens: 'NaN', total_tokens: 'NaN' },
    invalid: true,
  },
  {
    name: 'Infinity',
    usage: { prompt_tokens: 'INF', completion_tokens: 7, total_tokens: 'INF' },
    invalid: true,
  },
  {
    name: '2e16',
    usage: { prompt_tokens: 2e16, completion_tokens: 2e16, total_tokens: 4e16 },
    invalid: true,
  },
  {
    name: 'null',
    usage: { prompt_tokens: null, completion_tokens: null, total_tokens: null },
    invalid: false,
  },
  { name: 'missing', usage: undefined, invalid: false },
];

describe('usage a provider reports, under 200 concurrent requests through a block gate', () => {
  it.each(CASES)(
    '$name usage: the limit holds, the ledger equals what was charged, no entry is lost',
    async ({ usage, invalid }) => {
      const user = await signUpUser(app);
      const limit = 0.05;
      const gate = await createGate(app, user, {
        model: MODEL,
        spendingLimit: limit,
        spendingEnforcement: 'block',
      });
      const worst = worstCaseCost([MODEL], {
        messages: [{ role: 'user', content: QUESTION }],
        maxTokens: DEFAULT_MAX_OUTPUT_TOKENS,
      });
      emulator.upstream.reset();
      emulator.upstream.reply(...alternating(usage, 200));

      const responses = await race(gate.id, user.auth, 200);
      expect(responses.filter((r) => r.status !== 200 && r.status !== 402)).toHaveLength(0);
      const answered = await Promise.all(
        responses
          .filter((r) => r.status === 200)
          .map(async (r) => ({
            id: r.headers.get('x-gatehouse-request-id'),
            body: (await r.json()) as { content: string; costUsd: number },
          })),
      );
      expect(answered.length).toBeGreaterThan(0);

      const entries = await logEntriesOf(app, gate.id);
      expect(entries).toHaveLength(200);
      const costs = entries.map((e) => Number(e.costUsd));
      for (const cost of costs) {
        expect(Number.isFinite(cost)).toBe(true);
        expect(cost).toBeGreaterThanOrEqual(0);
      }
      const after = await readGate(app, user, gate.id);
      expect(after.spendingCurrent).toBeLessThanOrEqual(limit);
      // The ledger is what the entries were charged, to the cent's millionth: never below it.
      expect(after.spendingCurrent).toBeCloseTo(sum(costs), 6);

      const byId = new Map(entries.map((e) => [e.id, e]));
      const bad = answered.filter((a) => a.body.content.length > 100);
      expect(bad.length).toBeGreaterThan(0);
      for (const a of bad) {
        const entry = byId.get(a.id as string);
        expect(entry, `entry of ${a.id}`).toBeDefined();
        if (invalid) {
          expect(Number(entry?.costUsd)).toBeCloseTo(worst, 8);
          expect(entry?.usageNote).toMatch(/invalid usage.*charged the worst case/);
          expect(entry?.tokensEstimated).toBe(false);
        } else {
          // Estimated, but never above what the request reserved.
          expect(entry?.tokensEstimated).toBe(true);
          expect(Number(entry?.costUsd)).toBeLessThanOrEqual(worst + 1e-8);
        }
      }
      for (const a of answered.filter((x) => x.body.content.length <= 100)) {
        expect(byId.get(a.id as string)?.usageNote ?? null).toBeNull();
      }
    },
  );
});

describe('one gate whose spending cannot be recorded', () => {
  it("does not stop another account's gate from being changed after a 2e16 answer", async () => {
    const alice = await signUpUser(app);
    const bob = await signUpUser(app);
    // An alert limit: nothing reserved, the cost is added as it comes.
    const spender = await createGate(app, alice, {
      model: MODEL,
      spendingLimit: 100,
      spendingEnforcement: 'alert_only',
    });
    const other = await createGate(app, bob, { spendingLimit: 5, spendingEnforcement: 'block' });
    emulator.upstream.reset();
    emulator.upstream.reply(answerWith({ prompt_tokens: 2e16, completion_tokens: 2e16 }, 'short'));

    const res = await race(spender.id, alice.auth, 1);
    expect(res[0]?.status).toBe(200);
    const patched = await app.request(`/v1/gates/${other.id}`, {
      method: 'PATCH',
      headers: bob.auth,
      json: { spendingLimit: 10 },
    });
    expect(patched.status, await patched.clone().text()).toBe(200);

    // The answer was charged its worst case, and the ledger holds it.
    const entries = await logEntriesOf(app, spender.id);
    expect(entries).toHaveLength(1);
    const read = await readGate(app, alice, spender.id);
    expect(read.spendingCurrent).toBeGreaterThan(0);
    expect(read.spendingCurrent).toBeCloseTo(Number(entries[0]?.costUsd), 8);
    expect(entries[0]?.usageNote).toMatch(/invalid usage/);
  });

  it.runIf(databaseKind === 'pglite')(
    'a gate the database refuses to write keeps its counter, and the other gates are written',
    async () => {
      const alice = await signUpUser(app);
      const bob = await signUpUser(app);
      const stuck = await createGate(app, alice, { spendingLimit: 5, spendingEnforcement: 'block' });
      const fine = await createGate(app, bob, { spendingLimit: 5, spendingEnforcement: 'block' });
      // A real refusal by the database, for one gate's row only.
      await sql().query(`CREATE FUNCTION refuse_stuck_gate() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'refused for the test'; END $$`);
      await sql().query(`CREATE TRIGGER refuse_stuck_gate BEFORE UPDATE OF spending_current ON gates
        FOR EACH ROW WHEN (NEW.id = '${stuck.id}'::uuid) EXECUTE FUNCTION refuse_stuck_gate()`);
      try {
        for (const [gate, user] of [
          [stuck, alice],
          [fine, bob],
        ] as const) {
          const res = await app.request('/v3/chat', {
            method: 'POST',
            headers: user.auth,
            json: { gateId: gate.id, data: { messages: say('hello') } },
          });
          expect(res.status).toBe(200);
        }
        const spentFine = (await readGate(app, bob, fine.id)).spendingCurrent;
        const spentStuck = (await readGate(app, alice, stuck.id)).spendingCurrent;
        expect(spentFine).toBeGreaterThan(0);
        // Bob's change writes his gate; Alice's unwritten counter is no reason to refuse it.
        const patched = await app.request(`/v1/gates/${fine.id}`, {
          method: 'PATCH',
          headers: bob.auth,
          json: { spendingLimit: 10 },
        });
        expect(patched.status, await patched.clone().text()).toBe(200);
        const [row] = await sql().query<{ spending_current: string }>(
          'SELECT spending_current FROM gates WHERE id = $1::uuid',
          [fine.id],
        );
        expect(Number(row?.spending_current)).toBeCloseTo(spentFine, 8);
        // Alice's counter is still held, not lost.
        expect((await readGate(app, alice, stuck.id)).spendingCurrent).toBeCloseTo(spentStuck, 8);
      } finally {
        await sql().query('DROP TRIGGER refuse_stuck_gate ON gates');
        await sql().query('DROP FUNCTION refuse_stuck_gate()');
      }
    },
  );
});

describe('a settlement with a value that is no cost', () => {
  it.each([Number.NaN, Number.POSITIVE_INFINITY, -1])(
    'settles %s as the reservation, so the reservation is released and the counter stays a sum',
    async (bad) => {
      const user = await signUpUser(app);
      const gate = await createGate(app, user, { spendingLimit: 1, spendingEnforcement: 'block' });
      // The ledger this database's runtime uses, closed here so that what it holds is written.
      const ledger = sql().kind === 'pglite' ? new LocalLedger() : createSqlLedger();
      const first = await ledger.reserve(gate.id, 0.25);
      const second = await ledger.reserve(gate.id, 0.25);
      const granted = (r: Reserved) => {
        if (isRefusal(r)) throw new Error('the reservation was refused');
        return r;
      };
      await ledger.settle(granted(first), bad);
      await ledger.settle(granted(second), 0.1);
      await ledger.close();
      const [row] = await sql().query<{ spending_current: string }>(
        'SELECT spending_current FROM gates WHERE id = $1::uuid',
        [gate.id],
      );
      expect(Number(row?.spending_current)).toBeCloseTo(0.35, 8);
    },
  );
});

describe('shutdown', () => {
  it('drains the queued log entries and does not throw, after a 2e16 answer', async () => {
    // A runtime of its own, closed here as SIGTERM closes the process's.
    const runtime = createRuntime(app.config);
    const own = createApp(app.config, runtime);
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      model: MODEL,
      spendingLimit: 100,
      spendingEnforcement: 'alert_only',
    });
    emulator.upstream.reset();
    emulator.upstream.reply(
      answerWith({ prompt_tokens: 2e16, completion_tokens: 2e16 }, 'short'),
      ...Array.from({ length: 9 }, () => answerWith(GOOD_USAGE, 'short')),
    );
    for (let i = 0; i < 10; i++) {
      const res = await own.request('/v3/chat', {
        method: 'POST',
        headers: { ...user.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ gateId: gate.id, data: { messages: say('hello') } }),
      });
      expect(res.status).toBe(200);
    }
    await expect(runtime.close()).resolves.toBeUndefined();
    const entries = await app.db.prisma.logEntry.count({ where: { gateId: gate.id } });
    expect(entries).toBe(10);
  });
});
