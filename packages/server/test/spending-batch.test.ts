/**
 * The SQL ledger (PostgreSQL's) reserves and settles in group commits: the calls that arrive
 * while a gate's statement runs go together in the next. A batch must decide exactly as the
 * same calls one by one would: in order, each that fits beside those granted before it. A call
 * too big for what is left is refused alone and suspends nothing; the gate is suspended when its
 * spending reaches the limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalLedger } from '../src/dataplane/localLedger.ts';
import { createSpendingAccumulator, isRefusal, reserve, settle } from '../src/dataplane/spending.ts';
import type { Database } from '../src/db/client.ts';
import { openTestDatabase } from './support/app.ts';

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

describe('reservations in one batch', () => {
  it('grants, in order, the ones that fit under the limit, and refuses the rest', async () => {
    const gate = await blockGate(1);
    // The first call runs alone; the four sent meanwhile share the next statement.
    const first = reserve(gate.id, 0.25);
    const batch = [0.25, 0.25, 0.25, 0.25].map((amount) => reserve(gate.id, amount));
    const granted = [await first, ...(await Promise.all(batch))];
    expect(granted.map((r) => !isRefusal(r))).toEqual([true, true, true, true, false]);
    expect(granted[4]).toMatchObject({ refused: true, reached: true, remaining: 0, limit: 1 });
    const row = await gateRow(gate.id);
    expect(Number(row.spendingCurrent)).toBe(1);
    expect(row.spendingStatus).toBe('suspended');
  });

  it('grants a smaller call after one too big for what is left, and suspends nothing for the refusal', async () => {
    const gate = await blockGate(1);
    const first = reserve(gate.id, 0.5);
    const batch = [0.75, 0.25].map((amount) => reserve(gate.id, amount));
    const granted = [await first, ...(await Promise.all(batch))];
    expect(granted.map((r) => !isRefusal(r))).toEqual([true, false, true]);
    expect(granted[1]).toMatchObject({ refused: true, reached: false, remaining: 0.5, limit: 1 });
    const row = await gateRow(gate.id);
    expect(Number(row.spendingCurrent)).toBe(0.75);
    expect(row.spendingStatus).toBe('active');
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
    const row = await gateRow(gate.id);
    expect(Number(row.spendingCurrent)).toBe(0.75);
    expect(row.spendingStatus).toBe('active');
  });
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
