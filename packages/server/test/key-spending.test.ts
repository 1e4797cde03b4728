/**
 * An API key's own spending limit, and a gate's limit per end user, are scopes of every request,
 * reserved with the gate's and the others at once, all or none: 150 concurrent requests on one
 * key over two gates never spend past the key's budget, two end users each get their own room
 * and no more, on both ledgers, and each refusal names its scope.
 */
import { describe, expect, it } from 'vitest';
import { worstCaseCost } from '../src/dataplane/cost.ts';
import { publish } from '../src/db/changes.ts';
import { sql } from '../src/db/client.ts';
import { databaseKind, LEDGERS, useTestApp } from './support/app.ts';
import { chat, type NativeError, readGate, say } from './support/chat.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';

describe.each(LEDGERS)('on %s', (_ledger, env) => {
  const app = useTestApp(env);

  /** Sets the key's limit in its row, as the keys API stores it, and drops the cached key. */
  async function limitKey(user: TestUser, limit: number, enforcement = 'block', period = 'monthly') {
    await sql().query(
      `UPDATE api_keys SET spending_limit = $2::numeric, spending_enforcement = $3, spending_limit_period = $4
       WHERE user_id = $1::uuid`,
      [user.id, limit.toFixed(8), enforcement, period],
    );
    await publish({ kind: 'account', userId: user.id });
  }

  async function keySpent(user: TestUser): Promise<number> {
    await app.runtime.spending.settled();
    const [row] = await sql().query<{ spending_current: string }>(
      'SELECT spending_current FROM api_keys WHERE user_id = $1::uuid',
      [user.id],
    );
    return Number(row?.spending_current);
  }

  it('lets at most N of 150 simultaneous requests over two gates through when the key covers N; the key never passes its limit', async () => {
    const user = await signUpUser(app);
    const N = 12;
    const content = '[mock:delay=2000] how much?';
    const maxTokens = 100;
    const worst = worstCaseCost(['mock/echo'], { messages: [{ role: 'user', content }], maxTokens });
    const limit = Number((N * worst).toFixed(8));
    const gates = [
      await createGate(app, user, { model: 'mock/echo', maxTokens }),
      await createGate(app, user, { model: 'mock/echo', maxTokens }),
    ];
    await limitKey(user, limit);

    const responses = await Promise.all(
      Array.from({ length: 150 }, (_, i) =>
        chat(app, user, (gates[i % 2] as { id: string }).id, { messages: say(content) }),
      ),
    );
    const passed = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 402);
    expect(passed.length + refused.length).toBe(150);
    expect(passed.length).toBeGreaterThan(0);
    expect(passed.length).toBeLessThanOrEqual(N);
    const body = (await refused[0]?.json()) as NativeError & { error: { details: Record<string, unknown> } };
    expect(body.error.code).toBe('key_spending_limit');
    expect(body.error.message).toMatch(/API key/);
    expect(body.error.details).toMatchObject({ scope: 'key', limitUsd: limit });

    let charged = 0;
    for (const res of passed) charged += ((await res.json()) as { costUsd: number }).costUsd;
    const spent = await keySpent(user);
    expect(spent).toBeLessThanOrEqual(limit);
    expect(spent).toBeCloseTo(charged, 8);
    // The gates are charged what they answered, as without a key limit.
    const gateSpent =
      (await readGate(app, user, (gates[0] as { id: string }).id)).spendingCurrent +
      (await readGate(app, user, (gates[1] as { id: string }).id)).spendingCurrent;
    expect(gateSpent).toBeCloseTo(charged, 8);
  });

  it('refuses even a request that costs nothing once the key has reached its limit, and a total limit never resets', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/echo', maxTokens: 50 });
    await limitKey(user, 0.00000001, 'block', 'total');
    const first = await chat(app, user, gate.id);
    expect(first.status).toBe(402);
    const body = (await first.json()) as NativeError;
    expect(body.error.code).toBe('key_spending_limit');
    expect(body.error.message).toMatch(/total spending limit/);
  });

  it('an alert-only key limit lets requests through and counts what the key spends', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/echo', maxTokens: 50 });
    await limitKey(user, 0.00000001, 'alert_only');
    let charged = 0;
    for (let i = 0; i < 3; i++) {
      const res = await chat(app, user, gate.id);
      expect(res.status).toBe(200);
      charged += ((await res.json()) as { costUsd: number }).costUsd;
    }
    expect(await keySpent(user)).toBeCloseTo(charged, 8);
  });

  // On PGlite the database ledger keeps keys' counters in memory, as it does gates': a key's
  // limit costs a request no statement on its row. Shown with the row refusing every write of the
  // key's spending (a trigger): requests are still decided, exactly, and the keys API reads them.
  it.runIf(databaseKind === 'pglite' && env.REDIS_URL === undefined)(
    "decides a key's limit in memory on the embedded database: its row refusing writes holds nothing up, the API shows what it spent, and the row has it once it takes writes again",
    async () => {
      const user = await signUpUser(app);
      const gate = await createGate(app, user, { model: 'mock/echo', maxTokens: 50 });
      await limitKey(user, 1);
      const [key] = await sql().query<{ id: string }>('SELECT id FROM api_keys WHERE user_id = $1::uuid', [
        user.id,
      ]);
      const keyId = (key as { id: string }).id;
      await sql().exec(`
        CREATE FUNCTION refuse_key_spending() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.id = '${keyId}'::uuid AND NEW.spending_current IS DISTINCT FROM OLD.spending_current THEN
            RAISE EXCEPTION 'this key''s spending is not to be written';
          END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER refuse_key_spending BEFORE UPDATE ON api_keys FOR EACH ROW EXECUTE FUNCTION refuse_key_spending();`);
      try {
        let charged = 0;
        for (let i = 0; i < 3; i++) {
          const res = await chat(app, user, gate.id);
          expect(res.status, await res.clone().text()).toBe(200);
          charged += ((await res.json()) as { costUsd: number }).costUsd;
        }
        expect(charged).toBeGreaterThan(0);
        await app.runtime.spending.settled();
        expect(await keySpent(user)).toBe(0);
        const listed = (await (await app.request('/v1/api-keys', { headers: user.auth })).json()) as {
          apiKeys: { id: string; spendingCurrent: number }[];
        };
        expect(listed.apiKeys.find((k) => k.id === keyId)?.spendingCurrent).toBeCloseTo(charged, 8);
        // A limit just above what it spent: the next request's worst case does not fit. Decided on
        // what memory holds; the row, still at 0, would let it through.
        await limitKey(user, Number((charged + 0.00000002).toFixed(8)));
        const refused = await chat(app, user, gate.id);
        expect(refused.status).toBe(402);
        expect(
          ((await refused.json()) as NativeError & { error: { details: Record<string, unknown> } }).error
            .details,
        ).toMatchObject({ scope: 'key' });
        await sql().exec('DROP TRIGGER refuse_key_spending ON api_keys; DROP FUNCTION refuse_key_spending()');
        await app.runtime.spending.settled();
        expect(await keySpent(user)).toBeCloseTo(charged, 8);
      } finally {
        await sql().exec(
          'DROP TRIGGER IF EXISTS refuse_key_spending ON api_keys; DROP FUNCTION IF EXISTS refuse_key_spending()',
        );
      }
    },
  );

  // On every ledger: with Redis the listing after the change reads the row, which has the `total`
  // period's settlement only if the database took it (PGlite once refused its far end date).
  it("keeps what a key spent when its period changes from 'total' to 'monthly' within the month it started, as its row would", async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/echo', maxTokens: 50 });
    await limitKey(user, 1, 'block', 'total');
    const res = await chat(app, user, gate.id);
    expect(res.status).toBe(200);
    const { costUsd } = (await res.json()) as { costUsd: number };
    // The settlement is written behind the answer: the hold is counted until it lands.
    await app.runtime.spending.settled();
    await limitKey(user, 1, 'block', 'monthly');
    const listed = (await (await app.request('/v1/api-keys', { headers: user.auth })).json()) as {
      apiKeys: { spendingCurrent: number }[];
    };
    expect(listed.apiKeys[0]?.spendingCurrent).toBeCloseTo(costUsd, 8);
    expect((await chat(app, user, gate.id)).status).toBe(200);
    await app.runtime.spending.settled();
    const after = (await (await app.request('/v1/api-keys', { headers: user.auth })).json()) as {
      apiKeys: { spendingCurrent: number }[];
    };
    expect(after.apiKeys[0]?.spendingCurrent).toBeGreaterThan(costUsd);
  });

  it("caps each end user of a gate, exactly, and one end user's spending leaves the other's room alone", async () => {
    const user = await signUpUser(app);
    const N = 8;
    const content = '[mock:delay=2000] how much for me?';
    const maxTokens = 100;
    const worst = worstCaseCost(['mock/echo'], { messages: [{ role: 'user', content }], maxTokens });
    const limit = Number((N * worst).toFixed(8));
    const gate = await createGate(app, user, {
      model: 'mock/echo',
      maxTokens,
      endUserSpendingLimit: limit,
      endUserSpendingLimitPeriod: 'daily',
    });
    const ask = (endUser: string) =>
      app.request('/v3/chat', {
        method: 'POST',
        headers: { ...user.auth, 'x-gatehouse-user': endUser },
        json: { gateId: gate.id, data: { messages: say(content) } },
      });
    const names = ['alice', 'bob'];
    const all = await Promise.all(
      names.map((name) => Promise.all(Array.from({ length: 75 }, () => ask(name)))),
    );
    for (const [i, answers] of all.entries()) {
      const name = names[i] as string;
      const passed = answers.filter((r) => r.status === 200);
      const refused = answers.filter((r) => r.status === 402);
      expect(passed.length + refused.length, name).toBe(75);
      expect(passed.length, name).toBeGreaterThan(0);
      expect(passed.length, name).toBeLessThanOrEqual(N);
      const body = (await refused[0]?.json()) as NativeError & {
        error: { details: Record<string, unknown> };
      };
      expect(body.error.code).toBe('spending_limit_exceeded');
      expect(body.error.details).toMatchObject({ scope: 'end_user', endUser: name, gateId: gate.id });
      let charged = 0;
      for (const res of passed) charged += ((await res.json()) as { costUsd: number }).costUsd;
      await app.runtime.spending.settled();
      const [row] = await sql().query<{ spending_current: string }>(
        'SELECT spending_current FROM end_user_spending WHERE gate_id = $1::uuid AND end_user = $2',
        [gate.id, name],
      );
      expect(Number(row?.spending_current), name).toBeCloseTo(charged, 8);
      expect(Number(row?.spending_current), name).toBeLessThanOrEqual(limit);
    }
    // A request naming no end user is not held to the per-user limit.
    const anonymous = await chat(app, user, gate.id);
    expect(anonymous.status).toBe(200);
  });
});
