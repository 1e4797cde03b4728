/**
 * Block limits against a provider that bills what it is allowed to, or more: the cap the worst
 * case assumes is the cap the provider is sent, and a cost above its reservation still lets no
 * later request through.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_OUTPUT_TOKENS, worstCaseCost } from '../src/dataplane/cost.ts';
import { databaseKind, useTestApp } from './support/app.ts';
import { logEntriesOf, readGate, say } from './support/chat.ts';
import { completion, startOpenAIEmulator } from './support/emulators/openai.ts';
import type { RecordedRequest } from './support/emulators/upstream.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';
import { useGateRowLock } from './support/rowLock.ts';

const emulator = await startOpenAIEmulator('openai', 'sk-spending-test');
const app = useTestApp({ OPENAI_API_KEY: emulator.apiKey, OPENAI_BASE_URL: emulator.baseUrl });
afterAll(() => emulator.upstream.close());
const holdGateRow = useGateRowLock(app);

const MODEL = 'openai/gpt-4o-mini';

/** The output cap the request carried (OpenAI's field), or null when it carried none. */
const capOf = (request: RecordedRequest): number | null =>
  request.body?.max_completion_tokens ?? request.body?.max_tokens ?? null;

/**
 * Answers after `delayMs` (so concurrent requests all reserve before any settles), billing
 * `bill(cap)` completion tokens, where cap is what the request allowed.
 */
function billing(bill: (cap: number | null) => number, delayMs = 300) {
  return (request: RecordedRequest) => ({
    type: 'json' as const,
    delayMs,
    body: completion('openai', {
      content: 'a long answer',
      usage: { prompt: 12, completion: bill(capOf(request)) },
    }),
  });
}

/** A block gate on MODEL, maxTokens 100, whose limit is `times` the worst case of the prompt 'hi'. */
async function blockGateForHi(user: TestUser, times: number) {
  const worst = worstCaseCost([MODEL], { messages: [{ role: 'user', content: 'hi' }], maxTokens: 100 });
  const limit = Number((times * worst).toFixed(8));
  const gate = await createGate(app, user, {
    model: MODEL,
    maxTokens: 100,
    spendingLimit: limit,
    spendingEnforcement: 'block',
  });
  return { gate, worst, limit };
}

async function race(gateId: string, auth: Record<string, string>, n: number, content: string) {
  return Promise.all(
    Array.from({ length: n }, () =>
      app.request('/v3/chat', {
        method: 'POST',
        headers: auth,
        json: { gateId, data: { messages: say(content) } },
      }),
    ),
  );
}

describe('a block limit on a gate without maxTokens', () => {
  it('sends the provider the output cap its worst case assumed, so a provider that bills up to it stays under the limit', async () => {
    const user = await signUpUser(app);
    const limit = 0.01;
    const gate = await createGate(app, user, {
      model: MODEL,
      maxTokens: null,
      spendingLimit: limit,
      spendingEnforcement: 'block',
    });
    emulator.upstream.reset();
    // Without a cap a provider writes (and bills) as long as it likes: a million tokens here.
    const replies = Array.from({ length: 5 }, () => billing((cap) => cap ?? 1_000_000));
    emulator.upstream.reply(...replies);

    const responses = await race(gate.id, user.auth, 5, 'write me an essay');
    const passed = responses.filter((r) => r.status === 200).length;
    expect(passed).toBeGreaterThan(0);
    expect(responses.filter((r) => r.status === 402)).toHaveLength(5 - passed);

    for (const request of emulator.upstream.requests) expect(capOf(request)).toBe(DEFAULT_MAX_OUTPUT_TOKENS);
    const after = await readGate(app, user, gate.id);
    expect(after.spendingCurrent).toBeGreaterThan(0);
    expect(after.spendingCurrent).toBeLessThanOrEqual(limit);
  });

  it('sends no cap when the gate has no block limit (nothing to bound)', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: MODEL, maxTokens: null, spendingLimit: null });
    emulator.upstream.reset();
    emulator.upstream.reply(billing(() => 5, 0));
    const [res] = await race(gate.id, user.auth, 1, 'hi');
    expect(res?.status).toBe(200);
    expect(capOf(emulator.upstream.last())).toBeNull();
  });
});

describe('a provider that reports more completion tokens than it was allowed', () => {
  it('lets no request through once spending is past the limit, and records every dollar it billed', async () => {
    const user = await signUpUser(app);
    const N = 4;
    const maxTokens = 200;
    const content = 'how much will this cost?';
    const worst = worstCaseCost([MODEL], { messages: [{ role: 'user', content }], maxTokens });
    const limit = Number((N * worst).toFixed(8));
    const gate = await createGate(app, user, {
      model: MODEL,
      maxTokens,
      spendingLimit: limit,
      spendingEnforcement: 'block',
    });
    emulator.upstream.reset();
    // Every answer bills ten times the cap it was sent.
    emulator.upstream.reply(...Array.from({ length: 20 }, () => billing((cap) => 10 * (cap ?? 0))));

    const first = await race(gate.id, user.auth, 20, content);
    const passed = first.filter((r) => r.status === 200).length;
    expect(passed).toBeGreaterThan(0);
    expect(passed).toBeLessThanOrEqual(N);
    expect(first.filter((r) => r.status === 402)).toHaveLength(20 - passed);
    for (const request of emulator.upstream.requests) expect(capOf(request)).toBe(maxTokens);

    // The overbilled answers took spending past the limit: the gate is suspended and refuses
    // everything after, even a request that is tiny.
    const after = await readGate(app, user, gate.id);
    expect(after.spendingCurrent).toBeGreaterThan(limit);
    expect(after.spendingStatus).toBe('suspended');
    const sentBefore = emulator.upstream.requests.length;
    const later = await race(gate.id, user.auth, 5, 'tiny');
    for (const res of later) expect(res.status).toBe(402);
    expect(emulator.upstream.requests).toHaveLength(sentBefore);

    // Nothing billed is hidden: the counter is the sum of what the log entries charged, and it is
    // past the limit by no more than what the provider billed beyond the reservations.
    const entries = await logEntriesOf(app, gate.id);
    const charged = entries.reduce((sum, e) => sum + Number(e.costUsd), 0);
    expect(after.spendingCurrent).toBeCloseTo(charged, 8);
    const excess = entries
      .filter((e) => e.success)
      .reduce((sum, e) => sum + Math.max(0, Number(e.costUsd) - worst), 0);
    expect(after.spendingCurrent).toBeLessThanOrEqual(limit + excess + 1e-9);
  });

  it('suspends the gate as soon as such an answer settles past the limit, before any request is refused', async () => {
    const user = await signUpUser(app);
    const { gate, limit } = await blockGateForHi(user, 3);
    emulator.upstream.reset();
    emulator.upstream.reply(billing((cap) => 50 * (cap ?? 0), 0));
    const [res] = await race(gate.id, user.auth, 1, 'hi');
    expect(res?.status).toBe(200);
    const after = await readGate(app, user, gate.id);
    expect(after.spendingCurrent).toBeGreaterThan(limit);
    expect(after.spendingStatus).toBe('suspended');
  });
});

describe('suspension', () => {
  it('comes when spending reaches the limit, not when one request is too big for what is left', async () => {
    const user = await signUpUser(app);
    const { gate, limit } = await blockGateForHi(user, 3);
    emulator.upstream.reset();
    emulator.upstream.reply(
      billing(() => 5, 0),
      billing((cap) => 50 * (cap ?? 0), 0),
    );

    // Too big for the whole limit: refused alone, before the provider; the gate stays active.
    const tooBig = (await race(gate.id, user.auth, 1, 'x'.repeat(100_000)))[0] as Response;
    expect(tooBig.status).toBe(402);
    expect(((await tooBig.json()) as { error: { message: string } }).error.message).toMatch(
      /its monthly spending limit of \$[\d.]+ is below this request's worst case of \$[\d.]+/,
    );
    expect(emulator.upstream.requests).toHaveLength(0);
    expect((await readGate(app, user, gate.id)).spendingStatus).toBe('active');

    // A small one passes; the next, billed far past its worst case, takes spending past the limit.
    const small = (await race(gate.id, user.auth, 1, 'hi'))[0] as Response;
    expect(small.status).toBe(200);
    expect((await readGate(app, user, gate.id)).spendingStatus).toBe('active');
    const overbilled = (await race(gate.id, user.auth, 1, 'hi'))[0] as Response;
    expect(overbilled.status).toBe(200);
    const after = await readGate(app, user, gate.id);
    expect(after.spendingCurrent).toBeGreaterThanOrEqual(limit);
    expect(after.spendingStatus).toBe('suspended');

    // Now even the smallest request is refused, as a limit reached.
    const late = (await race(gate.id, user.auth, 1, 'hi'))[0] as Response;
    expect(late.status).toBe(402);
    const refusal = (await late.json()) as { error: { message: string; details: Record<string, unknown> } };
    expect(refusal.error.message).toMatch(/has reached its monthly spending limit/);
    expect(refusal.error.details).toMatchObject({ reason: 'limit_reached', scope: 'gate', gateId: gate.id });
    expect(emulator.upstream.requests).toHaveLength(2);
  });
});

describe('attempts the provider billed but the gateway could not use', () => {
  const contract = {
    responseFormatEnabled: true,
    responseFormatType: 'json_schema',
    responseFormatSchema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
  };
  // The contract as a request through the gate carries it: its schema counts in the worst case.
  const responseFormat = {
    type: 'json_schema' as const,
    json_schema: { name: 'gate_response', schema: contract.responseFormatSchema, strict: true },
  };

  it('are charged against a block limit, so answers that break the JSON contract cannot spend past it', async () => {
    const user = await signUpUser(app);
    const maxTokens = 100;
    const worst = worstCaseCost([MODEL], {
      messages: [{ role: 'user', content: 'hi' }],
      maxTokens,
      responseFormat,
    });
    const limit = Number((3 * worst).toFixed(8));
    const gate = await createGate(app, user, {
      model: MODEL,
      routingStrategy: 'single',
      maxTokens,
      spendingLimit: limit,
      spendingEnforcement: 'block',
      ...contract,
    });
    emulator.upstream.reset();
    // Each answer is billed in full and is not the JSON the gate promises.
    const broken = (request: RecordedRequest) => ({
      type: 'json' as const,
      body: completion('openai', {
        content: 'not json',
        usage: { prompt: 12, completion: capOf(request) ?? 0 },
      }),
    });
    emulator.upstream.reply(...Array.from({ length: 10 }, () => broken));
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await race(gate.id, user.auth, 1, 'hi'))[0]?.status ?? 0);

    // Every provider call was billed: three fit under the limit, then the gate refuses.
    expect(statuses.filter((s) => s === 502).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === 502).length).toBeLessThanOrEqual(3);
    expect(statuses.at(-1)).toBe(402);
    const entries = await logEntriesOf(app, gate.id);
    const charged = entries.reduce((sum, e) => sum + Number(e.costUsd), 0);
    expect(charged).toBeGreaterThan(0);
    const after = await readGate(app, user, gate.id);
    expect(after.spendingCurrent).toBeCloseTo(charged, 8);
    expect(after.spendingCurrent).toBeLessThanOrEqual(limit);
    expect(emulator.upstream.requests.length).toBe(statuses.filter((s) => s === 502).length);
  });

  it('are charged besides the answer of the fallback, and reserved for before it is called', async () => {
    const user = await signUpUser(app);
    const maxTokens = 100;
    const worst = worstCaseCost([MODEL], {
      messages: [{ role: 'user', content: 'hi' }],
      maxTokens,
      responseFormat,
    });
    const gate = await createGate(app, user, {
      model: MODEL,
      routingStrategy: 'fallback',
      fallbackModels: ['openai/gpt-4.1-nano'],
      maxTokens,
      spendingLimit: Number((10 * worst).toFixed(8)),
      spendingEnforcement: 'block',
      ...contract,
    });
    emulator.upstream.reset();
    emulator.upstream.reply(
      billing(() => 40, 0),
      (request: RecordedRequest) => ({
        type: 'json' as const,
        body: completion('openai', {
          content: '{"a":"yes"}',
          usage: { prompt: 12, completion: capOf(request) ? 5 : 0 },
        }),
      }),
    );
    const [res] = await race(gate.id, user.auth, 1, 'hi');
    expect(res?.status).toBe(200);
    const answer = (await res?.json()) as { costUsd: number };
    const [entry] = await logEntriesOf(app, gate.id);
    const attempts = entry?.attempts as { ok: boolean; costUsd?: number }[];
    expect(attempts.map((a) => a.ok)).toEqual([false, true]);
    expect(attempts[0]?.costUsd).toBeGreaterThan(0);
    // The client is told the whole cost: the broken answer and the one it got.
    expect(answer.costUsd).toBeGreaterThan(attempts[0]?.costUsd ?? 0);
    expect(Number(entry?.costUsd)).toBeCloseTo(answer.costUsd, 8);
    expect((await readGate(app, user, gate.id)).spendingCurrent).toBeCloseTo(answer.costUsd, 8);
  });

  it('stop with a 402 before a fallback whose worst case no longer fits beside what was charged', async () => {
    const user = await signUpUser(app);
    const maxTokens = 100;
    const worst = worstCaseCost(['openai/gpt-4.1-nano', MODEL], {
      messages: [{ role: 'user', content: 'hi' }],
      maxTokens,
      responseFormat,
    });
    const gate = await createGate(app, user, {
      model: MODEL,
      routingStrategy: 'fallback',
      fallbackModels: ['openai/gpt-4.1-nano'],
      maxTokens,
      spendingLimit: Number((1.2 * worst).toFixed(8)),
      spendingEnforcement: 'block',
      ...contract,
    });
    emulator.upstream.reset();
    // The primary's broken answer is billed at its whole output cap.
    emulator.upstream.reply(billing((cap) => cap ?? 0, 0));
    const [res] = await race(gate.id, user.auth, 1, 'hi');
    expect(res?.status).toBe(402);
    expect(emulator.upstream.requests).toHaveLength(1);
    const [entry] = await logEntriesOf(app, gate.id);
    const after = await readGate(app, user, gate.id);
    expect(Number(entry?.costUsd)).toBeGreaterThan(0);
    expect(after.spendingCurrent).toBeCloseTo(Number(entry?.costUsd), 8);
    expect(after.spendingCurrent).toBeLessThanOrEqual(Number((1.2 * worst).toFixed(8)));
  });
});

/**
 * A request whose provider answers only once another transaction holds the gate's row, so that
 * its settlement cannot commit until `release()`: the provider bills `completion` tokens.
 */
async function settlingUnderLock(
  gateId: string,
  auth: Record<string, string>,
  completion: (cap: number | null) => number,
) {
  let arrived = () => {};
  const arrival = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  let locked = () => {};
  const rowLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  emulator.upstream.reply((request) => {
    arrived();
    return { ...billing(completion, 0)(request), until: rowLocked };
  });
  const answer = race(gateId, auth, 1, 'hi').then(([res]) => res as Response);
  try {
    // The request fails before reaching the provider: the test fails on its answer, not a hang.
    await Promise.race([arrival, answer]);
    return { answer, release: await holdGateRow(gateId) };
  } finally {
    locked();
  }
}

/**
 * Resolves once a statement of the ledger on the gate's row (a settlement, with the one request
 * under way) waits for a lock (PostgreSQL's own view).
 */
async function settlementWaitingForLock() {
  for (;;) {
    const [row] = await app.db.prisma.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM pg_stat_activity
      WHERE wait_event_type = 'Lock' AND query LIKE '%cardinality($3::timestamptz[])%'`;
    if (Number(row?.n) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.runIf(databaseKind === 'postgres')('a settlement on PostgreSQL', () => {
  it('that gives back part of the hold is written behind the answer, and the next request is decided after it', async () => {
    const user = await signUpUser(app);
    // Room for one worst case beside what the first request costs, not for two worst cases.
    const { gate, worst, limit } = await blockGateForHi(user, 1.5);
    emulator.upstream.reset();
    const { answer, release } = await settlingUnderLock(gate.id, user.auth, () => 1);
    const answered = await answer;
    expect(answered.status, await answered.clone().text()).toBe(200);
    // Until the settlement lands the gate holds the worst case: more than was spent, never less.
    const held = await app.db.prisma.gate.findUniqueOrThrow({ where: { id: gate.id } });
    expect(Number(held.spendingCurrent)).toBeCloseTo(worst, 8);

    emulator.upstream.reply(billing(() => 1, 0));
    const second = race(gate.id, user.auth, 1, 'hi');
    await release();
    const [next] = await second;
    // Had it been decided before the first settlement landed, two worst cases would not fit.
    expect(next?.status, await next?.clone().text()).toBe(200);
    const entries = await logEntriesOf(app, gate.id);
    const charged = entries.reduce((sum, e) => sum + Number(e.costUsd), 0);
    const after = await readGate(app, user, gate.id);
    expect(after.spendingCurrent).toBeCloseTo(charged, 8);
    expect(after.spendingCurrent).toBeLessThanOrEqual(limit);
  });

  it('that charges more than the hold is committed before the answer leaves', async () => {
    const user = await signUpUser(app);
    const { gate, limit } = await blockGateForHi(user, 3);
    emulator.upstream.reset();
    // The provider bills 50 times the cap it was sent: far past the request's worst case.
    const { answer, release } = await settlingUnderLock(gate.id, user.auth, (cap) => 50 * (cap ?? 0));
    let answeredEarly = false;
    void answer.then(() => {
      answeredEarly = true;
    });
    await settlementWaitingForLock();
    expect(answeredEarly).toBe(false);
    await release();
    const res = await answer;
    expect(res.status, await res.clone().text()).toBe(200);
    // Read at once, past any ledger: the charge was in the row when the answer came.
    const stored = await app.db.prisma.gate.findUniqueOrThrow({ where: { id: gate.id } });
    expect(Number(stored.spendingCurrent)).toBeGreaterThan(limit);
    expect(stored.spendingStatus).toBe('suspended');
  });
});
