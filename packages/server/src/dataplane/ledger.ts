/**
 * Where a request's spending is decided and recorded. Two ledgers follow the same rules:
 *
 * - SQL (PostgreSQL): every decision is one atomic statement on the gate's row, so several
 *   gateway processes sharing the database can never push a block gate past its limit.
 * - Local (the embedded PGlite, which one process owns): decisions are made in memory, where the
 *   single thread makes them atomic, and reads see them at once (onSpendingHeld). The counters
 *   are written behind, within WRITE_DELAY_MS, the changes of every request in that time in one
 *   statement; close() (SIGTERM, SIGINT) writes what is left, as the log writer does.
 */
import { sql } from '../db/client.ts';
import {
  onSpendingHeld,
  onSpendingSettingsChanged,
  periodStart,
  reevaluateSpendingStatus,
  type SpendingEnforcement,
  type SpendingPeriod,
} from '../domain/spending.ts';
import {
  addSpending,
  createSpendingAccumulator,
  type Reservation,
  reserve,
  type Settlement,
  settle,
} from './spending.ts';

export type { Reservation, Settlement };

export interface SpendingLedger {
  /** Reserves a block gate's worst case; null (and the gate suspended) when over the limit. */
  reserve(gateId: string, amount: number): Promise<Reservation | null>;
  /** Replaces a reservation with what the request actually cost (0 if it failed). */
  settle(reservation: Reservation, actual: number): Promise<void>;
  /** Adds the cost of a request on a gate without a block limit. */
  add(gateId: string, amount: number, hasLimit: boolean): Promise<Settlement>;
  close(): Promise<void>;
}

export function createSqlLedger(): SpendingLedger {
  // Gates without a limit enforce nothing: their costs are summed and written every 250 ms.
  const accumulator = createSpendingAccumulator();
  onSpendingSettingsChanged(reevaluateSpendingStatus);
  return {
    reserve,
    settle,
    add: async (gateId, amount, hasLimit) => {
      if (hasLimit) return addSpending(gateId, amount);
      accumulator.add(gateId, amount);
      return { overLimit: false, crossed: false };
    },
    close: () => accumulator.close(),
  };
}

type GateSpending = {
  gateId: string;
  limit: number | null;
  enforcement: SpendingEnforcement;
  period: SpendingPeriod;
  current: number;
  periodStart: Date;
  status: 'active' | 'suspended';
  alertedAt: Date | null;
  /** Changed since last written. */
  dirty: boolean;
};

type Row = {
  spending_limit: string | number | null;
  spending_enforcement: SpendingEnforcement;
  spending_limit_period: SpendingPeriod;
  spending_current: string | number;
  spending_period_start: Date | string;
  spending_status: 'active' | 'suspended';
  spending_alerted_at: Date | string | null;
};

/**
 * How long a change may wait in memory before it is written: more requests share a write, and on
 * the embedded database every write is a commit to disk (at 20 ms they took a tenth of a core at
 * 1,000 req/s). Only a crash loses what waits; SIGTERM and SIGINT write it out.
 */
const WRITE_DELAY_MS = 250;

const WRITE = `UPDATE gates AS g SET
    spending_current = v.current, spending_period_start = v.period_start,
    spending_status = v.status, spending_alerted_at = v.alerted_at
  FROM jsonb_to_recordset($1::jsonb) AS v(id uuid, current numeric, period_start timestamptz, status text, alerted_at timestamptz)
  WHERE g.id = v.id`;

export function createLocalLedger(): SpendingLedger {
  const gates = new Map<string, GateSpending>();
  const loading = new Map<string, Promise<GateSpending | null>>();
  // Gates whose settings are being changed: requests wait until the new settings are loaded.
  const barriers = new Map<string, Promise<void>>();
  let writing: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let queued: Promise<void> | null = null;

  async function load(gateId: string): Promise<GateSpending | null> {
    const barrier = barriers.get(gateId);
    if (barrier) await barrier;
    const known = gates.get(gateId);
    if (known) return known;
    let pending = loading.get(gateId);
    if (!pending) {
      pending = sql()
        .query<Row>(
          `SELECT spending_limit, spending_enforcement, spending_limit_period, spending_current,
                  spending_period_start, spending_status, spending_alerted_at FROM gates WHERE id = $1::uuid`,
          [gateId],
        )
        .then(([row]) => {
          if (!row) return null;
          const state: GateSpending = {
            gateId,
            limit: row.spending_limit === null ? null : Number(row.spending_limit),
            enforcement: row.spending_enforcement,
            period: row.spending_limit_period,
            current: Number(row.spending_current),
            periodStart: new Date(row.spending_period_start),
            status: row.spending_status,
            alertedAt: row.spending_alerted_at === null ? null : new Date(row.spending_alerted_at),
            dirty: false,
          };
          // Read before a settings change finished: the change's reload must win, so keep nothing.
          if (!barriers.has(gateId)) gates.set(gateId, state);
          return state;
        })
        // Whatever happens, the next request reads afresh: a failed read must not stick.
        .finally(() => loading.delete(gateId));
      loading.set(gateId, pending);
    }
    return pending;
  }

  /** A new period starts the counter at zero and lifts a suspension. */
  function roll(s: GateSpending, now: Date): void {
    const start = periodStart(s.period, now);
    if (start.getTime() > s.periodStart.getTime()) {
      s.current = 0;
      s.periodStart = start;
      s.status = 'active';
      s.dirty = true;
    }
  }

  /**
   * Group commit: one write at a time, each carrying every change made before it started. A
   * caller arriving while a write runs waits for the next one, which takes all that arrived.
   */
  async function write(): Promise<void> {
    const batch = [...gates.values()].filter((s) => s.dirty);
    if (batch.length === 0) return;
    for (const s of batch) s.dirty = false;
    const rows = batch.map((s) => ({
      id: s.gateId,
      current: s.current.toFixed(10),
      period_start: s.periodStart.toISOString(),
      status: s.status,
      alerted_at: s.alertedAt?.toISOString() ?? null,
    }));
    try {
      await sql().query(WRITE, [JSON.stringify(rows)]);
    } catch (error) {
      for (const s of batch) s.dirty = true;
      throw error;
    }
  }

  /** Write-behind: changes go out within WRITE_DELAY_MS, many requests per statement. */
  function schedule(): void {
    timer ??= setTimeout(() => {
      timer = null;
      flush().catch((error) => console.error('spending: could not write the counters', error));
    }, WRITE_DELAY_MS);
  }

  function flush(): Promise<void> {
    if (!writing) {
      writing = write().finally(() => {
        writing = null;
      });
      return writing;
    }
    queued ??= writing
      .catch(() => {})
      .then(() => {
        queued = null;
        return flush();
      });
    return queued;
  }

  // Reads (the gate's page, the API) see the counters this process holds, written or not.
  onSpendingHeld((gateId) => {
    const s = gates.get(gateId);
    return s && { current: s.current, periodStart: s.periodStart, status: s.status };
  });

  onSpendingSettingsChanged(async (gateId) => {
    let release: () => void = () => {};
    const barrier = new Promise<void>((resolve) => {
      release = resolve;
    });
    barriers.set(gateId, barrier);
    try {
      await loading.get(gateId)?.catch(() => {});
      // Write what this process holds, then let the database decide with the new settings;
      // the next request reloads the gate from there.
      while (gates.get(gateId)?.dirty) await flush();
      gates.delete(gateId);
      await reevaluateSpendingStatus(gateId);
    } finally {
      barriers.delete(gateId);
      release();
    }
  });

  return {
    async reserve(gateId, amount) {
      const s = await load(gateId);
      if (!s) return null;
      roll(s, new Date());
      if (
        s.enforcement === 'block' &&
        s.limit !== null &&
        (s.status === 'suspended' || s.current + amount > s.limit)
      ) {
        if (s.status !== 'suspended') {
          s.status = 'suspended';
          s.dirty = true;
          schedule();
        }
        return null;
      }
      s.current += amount;
      s.dirty = true;
      return { gateId, amount, periodStart: s.periodStart };
    },
    async settle(reservation, actual) {
      const s = await load(reservation.gateId);
      if (!s) return;
      if (s.periodStart.getTime() === reservation.periodStart.getTime()) {
        s.current = Math.max(0, s.current - reservation.amount + actual);
      } else {
        roll(s, new Date());
        s.current += actual;
      }
      s.dirty = true;
      schedule();
    },
    async add(gateId, amount) {
      const s = await load(gateId);
      if (!s) return { overLimit: false, crossed: false };
      const now = new Date();
      roll(s, now);
      s.current += amount;
      s.dirty = true;
      const overLimit = s.limit !== null && s.current >= s.limit;
      const crossed =
        s.enforcement === 'alert_only' &&
        overLimit &&
        (s.alertedAt === null || s.alertedAt.getTime() < s.periodStart.getTime());
      if (crossed) s.alertedAt = now;
      schedule();
      return { overLimit, crossed };
    },
    async close() {
      if (timer) clearTimeout(timer);
      timer = null;
      while ([...gates.values()].some((s) => s.dirty)) await flush();
      onSpendingHeld(() => undefined);
      onSpendingSettingsChanged(reevaluateSpendingStatus);
    },
  };
}
