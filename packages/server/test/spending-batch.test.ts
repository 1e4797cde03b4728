/**
 * The SQL ledger (PostgreSQL's) reserves and settles in group commits: the calls that arrive
 * while a gate's statement runs go together in the next. A batch must decide exactly as the
 * same calls one by one would: in order, each that fits beside those granted before it. A call
 * too big for what is left is refused alone and suspends nothing; the gate is suspended when its
 * spending reaches the limit.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlLedger } from '../src/dataplane/ledger.ts';
import { LocalLedger } from '../src/dataplane/localLedger.ts';
import {
  addToRow,
  type RowScope,
  reserveRow,
  rowSettlementsLanded,
  settleRow,
} from '../src/dataplane/scopeRows.ts';
import { createSpendingAccumulator, isRefusal, reserve, settle } from '../src/dataplane/spending.ts';
import type { Database } from '../src/db/client.ts';
import { databaseKind, openTestDatabase, testDatabaseUrl } from './support/app.ts';

let db: Database;
let drop: () => Promise<void>;

beforeAll(async () => {
  ({ db, drop } = await openTestDatabase());
});
afterAll(async () => {
  await drop();
});

async function blockGate(limit: number) {
  const user = await db.prisma.user.create({
    data: { email: `${crypto.randomUUID()}@example.test`, passwordHash: 'x' },
  });
  return db.prisma.gate.create({
    data: {
      userId: user.id,
      name: 'batch',
      taskType: 'chat',
      model: 'mock/echo',
      spendingLimit: limit,
      spendingEnforcement: 'block',
    },
  });
}

const gateRow = (id: string) => db.prisma.gate.findUniqueOrThrow({ where: { id } });
/** What the gate's row counts and whether it is suspended. */
const gateState = async (id: string) => {
  const row = await gateRow(id);
  return { spent: Number(row.spendingCurrent), status: row.spendingStatus };
};

describe('reservations in one batch', () => {
  it('grants, in order, the ones that fit under the limit, and refuses the rest', async () => {
    const gate = await blockGate(1);
    // The first call runs alone; the four sent meanwhile share the next statement.
    const first = reserve(gate.id, 0.25);
    const batch = [0.25, 0.25, 0.25, 0.25].map((amount) => reserve(gate.id, amount));
    const granted = [await first, ...(await Promise.all(batch))];
    expect(granted.map((r) => !isRefusal(r))).toEqual([true, true, true, true, false]);
    expect(granted[4]).toMatchObject({ refused: true, reached: true, remaining: 0, limit: 1 });
    expect(await gateState(gate.id)).toEqual({ spent: 1, status: 'suspended' });
  });

  it('grants a smaller call after one too big for what is left, and suspends nothing for the refusal', async () => {
    const gate = await blockGate(1);
    const first = reserve(gate.id, 0.5);
    const batch = [0.75, 0.25].map((amount) => reserve(gate.id, amount));
    const granted = [await first, ...(await Promise.all(batch))];
    expect(granted.map((r) => !isRefusal(r))).toEqual([true, false, true]);
    expect(granted[1]).toMatchObject({ refused: true, reached: false, remaining: 0.5, limit: 1 });
    expect(await gateState(gate.id)).toEqual({ spent: 0.75, status: 'active' });
  });

  it('settles a batch to the sum of what the requests actually cost', async () => {
    const gate = await blockGate(10);
    const reservations = await Promise.all([1, 2, 3].map((amount) => reserve(gate.id, amount)));
    expect(Number((await gateRow(gate.id)).spendingCurrent)).toBe(6);
    await Promise.all(
      reservations.map((r, i) => {
        if (isRefusal(r)) throw new Error('a reservation was refused');
        return settle(r, [0.5, 0, 0.25][i] as number);
      }),
    );
    expect(await gateState(gate.id)).toEqual({ spent: 0.75, status: 'active' });
  });
});

describe('settlements and reservations in one statement', () => {
  /** The month before the current one, as a gate's row keeps a period's start (UTC). */
  const lastMonth = () => {
    const now = new Date();
    return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  };
  const setRow = (id: string, current: number, periodStart: Date, status = 'active') =>
    db.prisma.gate.update({
      where: { id },
      data: { spendingCurrent: current, spendingPeriodStart: periodStart, spendingStatus: status },
    });

  it('applies the settlements first: a hold given back makes room for a reservation sent beside it', async () => {
    const gate = await blockGate(1);
    const held = await reserve(gate.id, 1);
    if (isRefusal(held)) throw new Error('the first reservation was refused');
    expect((await gateRow(gate.id)).spendingStatus).toBe('suspended');
    // The first call runs alone (the limit is reached: refused); the three sent meanwhile share
    // the next statement, the settlement (0.25 of the 1 held) applied before the reservations.
    const first = reserve(gate.id, 0.5);
    const settled = settle(held, 0.25);
    const batch = [0.5, 0.5].map((amount) => reserve(gate.id, amount));
    expect(await first).toMatchObject({ refused: true, reached: true });
    await settled;
    const decided = await Promise.all(batch);
    expect(decided.map((r) => !isRefusal(r))).toEqual([true, false]);
    expect(decided[1]).toMatchObject({ refused: true, reached: false, remaining: 0.25, limit: 1 });
    expect(await gateState(gate.id)).toEqual({ spent: 0.75, status: 'active' });
  });

  it('suspends the gate when a settlement alone brings it to the limit, and lifts it when one gives back', async () => {
    const gate = await blockGate(1);
    const held = await reserve(gate.id, 0.5);
    if (isRefusal(held)) throw new Error('the reservation was refused');
    // The provider billed past the worst case: the settlement reaches the limit on its own.
    await settle(held, 1.25);
    expect(await gateState(gate.id)).toEqual({ spent: 1.25, status: 'suspended' });
    const refusedHeld = await reserve(gate.id, 0);
    expect(refusedHeld).toMatchObject({ refused: true, reached: true });
    await db.prisma.gate.update({ where: { id: gate.id }, data: { spendingLimit: 2 } });
    const more = await reserve(gate.id, 0.5);
    if (isRefusal(more)) throw new Error('the reservation under the raised limit was refused');
    await settle(more, 0);
    expect(await gateState(gate.id)).toEqual({ spent: 1.25, status: 'active' });
  });

  it('adds the cost of a hold from a period that has ended to the period the gate is in now', async () => {
    const gate = await blockGate(2);
    const before = lastMonth();
    // Last month ended with a request under way: 0.75 held.
    await setRow(gate.id, 0.75, before);
    const old = { gateId: gate.id, amount: 0.75, periodStart: before };
    const first = reserve(gate.id, 0.25);
    const settled = settle(old, 0.5);
    const next = reserve(gate.id, 0.5);
    // The first call, alone, starts this month at 0.25; the settlement beside the next
    // reservation adds the old request's 0.5 to it (the hold was last month's: nothing to take
    // back), and the reservation comes on top.
    expect(isRefusal(await first)).toBe(false);
    await settled;
    expect(isRefusal(await next)).toBe(false);
    const row = await gateRow(gate.id);
    expect(Number(row.spendingCurrent)).toBe(1.25);
  });

  it('a settlement and a reservation in one statement at the turn of a period: the old period is settled, the new one starts at the reservation', async () => {
    const gate = await blockGate(1);
    const before = lastMonth();
    // Last month ended with a request under way: 0.75 held, the gate suspended at its limit.
    await setRow(gate.id, 0.75, before, 'suspended');
    const old = { gateId: gate.id, amount: 0.75, periodStart: before };
    // The gate's first call, a settlement of nothing, runs alone; the two after it share a statement.
    const first = settle({ gateId: gate.id, amount: 0, periodStart: before }, 0);
    const settled = settle(old, 0.5);
    const next = reserve(gate.id, 0.5);
    await first;
    await settled;
    const reserved = await next;
    if (isRefusal(reserved)) throw new Error('the reservation in the new period was refused');
    const row = await gateRow(gate.id);
    // Last month's cost stays last month's; this month holds the new request's worst case.
    expect(Number(row.spendingCurrent)).toBe(0.5);
    expect(row.spendingStatus).toBe('active');
    expect(new Date(row.spendingPeriodStart).getTime()).toBeGreaterThan(before.getTime());
  });
});

describe("a key's and an end user's counter", () => {
  async function keyRow(): Promise<RowScope> {
    const user = await db.prisma.user.create({
      data: { email: `${crypto.randomUUID()}@example.test`, passwordHash: 'x' },
    });
    const key = await db.prisma.apiKey.create({
      data: {
        userId: user.id,
        name: 'batch',
        prefix: 'gh_test',
        keyHash: crypto.randomUUID(),
        spendingLimit: 1,
      },
    });
    return { kind: 'key', keyId: key.id, period: 'monthly' };
  }
  const keySpent = async (row: RowScope) =>
    Number(
      (await db.prisma.apiKey.findUniqueOrThrow({ where: { id: (row as { keyId: string }).keyId } }))
        .spendingCurrent,
    );
  const isRowRefusal = (r: object) => 'refused' in r;

  it('decides calls sent together in one statement: settlements first, then reservations and additions in order', async () => {
    const row = await keyRow();
    const held = await reserveRow(row, 1, 1);
    if (isRowRefusal(held)) throw new Error('the first reservation was refused');
    // The first call runs alone (the limit is reached: refused); the four sent meanwhile share
    // the next statement, the settlement (0.25 of the 1 held) applied before the rest.
    const first = reserveRow(row, 1, 0.5);
    const settled = settleRow(held as Exclude<typeof held, { refused: true }>, 0.25);
    const batch = [reserveRow(row, 1, 0.5), addToRow(row, 0.1), reserveRow(row, 1, 0.5)];
    expect(await first).toMatchObject({ refused: true, reached: true, remaining: 0, limit: 1 });
    await settled;
    const [granted, , refused] = await Promise.all(batch);
    expect(granted && isRowRefusal(granted)).toBe(false);
    expect(refused).toMatchObject({ refused: true, reached: false, limit: 1 });
    expect((refused as { remaining: number }).remaining).toBeCloseTo(0.15, 10);
    await rowSettlementsLanded();
    expect(await keySpent(row)).toBeCloseTo(0.85, 10);
  });

  it('refuses without writing the row: a spent key flooded with requests adds no row versions', async () => {
    const row = await keyRow();
    const keyId = (row as { keyId: string }).keyId;
    expect(isRowRefusal(await reserveRow(row, 1, 1))).toBe(false);
    const version = async () =>
      (
        await db.prisma.$queryRaw<
          { v: string }[]
        >`SELECT xmin::text AS v FROM api_keys WHERE id = ${keyId}::uuid`
      )[0]?.v;
    const before = await version();
    const refused = await Promise.all([0.5, 0.25, 0].map((amount) => reserveRow(row, 1, amount)));
    expect(refused.every((r) => isRowRefusal(r))).toBe(true);
    expect(await version()).toBe(before);
  });

  it("adds the cost of a key's hold from a period that has ended to the period the key is in now", async () => {
    const row = await keyRow();
    const keyId = (row as { keyId: string }).keyId;
    const now = new Date();
    const before = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
    // Last month ended with a request under way: 0.75 held.
    await db.prisma.apiKey.update({
      where: { id: keyId },
      data: { spendingLimit: 2, spendingCurrent: 0.75, spendingPeriodStart: before },
    });
    const first = reserveRow(row, 2, 0.25);
    const settled = settleRow({ row, amount: 0.75, periodStart: before }, 0.5);
    const next = reserveRow(row, 2, 0.5);
    // The first call, alone, starts this month at 0.25 (last month's 0.75 counts as nothing);
    // the settlement beside the next reservation adds the old request's 0.5 to this month.
    expect(isRowRefusal(await first)).toBe(false);
    await settled;
    expect(isRowRefusal(await next)).toBe(false);
    await rowSettlementsLanded();
    expect(await keySpent(row)).toBeCloseTo(1.25, 10);
    const stored = await db.prisma.apiKey.findUniqueOrThrow({ where: { id: keyId } });
    expect(stored.spendingPeriodStart.getTime()).toBeGreaterThan(before.getTime());
  });

  it("starts an end user's counter the first time a reservation names them", async () => {
    const gate = await blockGate(10);
    const row: RowScope = {
      kind: 'end_user',
      gateId: gate.id,
      endUser: `user-${crypto.randomUUID()}`,
      period: 'monthly',
    };
    const [a, b] = await Promise.all([reserveRow(row, 1, 0.75), reserveRow(row, 1, 0.5)]);
    expect(isRowRefusal(a as object)).toBe(false);
    expect(b).toMatchObject({ refused: true, reached: false, remaining: 0.25 });
    const stored = await db.prisma.endUserSpending.findMany({ where: { gateId: gate.id } });
    expect(stored.map((s) => Number(s.spendingCurrent))).toEqual([0.75]);
  });

  it.runIf(databaseKind === 'postgres')(
    'writes a settlement that gives back behind the answer, and waits for one that charges more',
    async () => {
      const row = await keyRow();
      const keyId = (row as { keyId: string }).keyId;
      const [cheap, dear] = await Promise.all([reserveRow(row, 1, 0.25), reserveRow(row, 1, 0.25)]);
      if (isRowRefusal(cheap) || isRowRefusal(dear)) throw new Error('a reservation was refused');
      const [schema] = await db.prisma.$queryRaw<{ s: string }[]>`SELECT current_schema() AS s`;
      const holder = new pg.Client({
        connectionString: testDatabaseUrl,
        options: `-c search_path="${schema?.s}"`,
      });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT id FROM api_keys WHERE id = $1 FOR UPDATE', [keyId]);
        // Another transaction holds the key's row: the settlement cannot be written, and the
        // caller is not kept waiting for it.
        await settleRow(cheap as Exclude<typeof cheap, { refused: true }>, 0.1);
        // The ledger's settled() (what tests and shutdown wait on) waits for it.
        let landed = false;
        const allLanded = createSqlLedger()
          .settled()
          .then(() => {
            landed = true;
          });
        let dearDone = false;
        const charged = settleRow(dear as Exclude<typeof dear, { refused: true }>, 0.5).then(() => {
          dearDone = true;
        });
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(dearDone).toBe(false);
        expect(landed).toBe(false);
        expect(await keySpent(row)).toBeCloseTo(0.5, 10);
        await holder.query('COMMIT');
        await charged;
        await allLanded;
        expect(await keySpent(row)).toBeCloseTo(0.6, 10);
      } finally {
        await holder.end();
      }
    },
  );
});

describe('a limit reached', () => {
  it('refuses even a request whose worst case is nothing (a free model), in both ledgers', async () => {
    const sqlGate = await blockGate(1);
    expect(isRefusal(await reserve(sqlGate.id, 1))).toBe(false);
    expect(await reserve(sqlGate.id, 0)).toMatchObject({ refused: true, reached: true, remaining: 0 });

    const local = new LocalLedger();
    const localGate = await blockGate(1);
    expect(isRefusal(await local.reserve(localGate.id, 1))).toBe(false);
    expect(await local.reserve(localGate.id, 0)).toMatchObject({
      refused: true,
      reached: true,
      remaining: 0,
    });
    await local.close();
  });
});

describe('costs of gates without a block limit', () => {
  it('keeps a cost the database refused and records it with the next write', async () => {
    const gate = await blockGate(1000);
    await db.prisma.gate.update({ where: { id: gate.id }, data: { spendingEnforcement: 'alert_only' } });
    const accumulator = createSpendingAccumulator(20);
    // Not a problem with the costs: the table is away for a moment (as in an outage).
    await db.driver.exec('ALTER TABLE gates RENAME TO gates_away');
    try {
      accumulator.add(gate.id, 0.25);
      await new Promise((r) => setTimeout(r, 150));
      accumulator.add(gate.id, 0.5);
      await new Promise((r) => setTimeout(r, 150));
    } finally {
      await db.driver.exec('ALTER TABLE gates_away RENAME TO gates');
    }
    await accumulator.close();
    expect(Number((await gateRow(gate.id)).spendingCurrent)).toBeCloseTo(0.75, 10);
  });
});
