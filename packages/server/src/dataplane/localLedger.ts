/**
 * The ledger of the embedded database, which one process owns: decisions are made in memory,
 * where the single thread makes them atomic, and reads see them at once (held()). The counters
 * are written behind, within WRITE_DELAY_MS, the changes of every request in that time in one
 * statement; close() (SIGTERM, SIGINT) writes what is left, as the log writer does. A gate the
 * database refuses to write holds up no other: the batch is then written gate by gate, and the
 * refused gate keeps its counter in memory (and is tried again with the next write).
 */
import { sql } from '../db/client.ts';
import {
  type HeldSpending,
  periodStart,
  reevaluateSpendingStatus,
  type SpendingEnforcement,
  type SpendingPeriod,
  type SpendingStatus,
} from '../domain/spending.ts';
import type { Reservation, Reserved, Settlement, SpendingLedger } from './ledger.ts';
import { rowSettlementsLanded } from './scopeRows.ts';
import { MAX_USD, recordableUsd, settledUsd } from './usage.ts';

type GateSpending = {
  gateId: string;
  limit: number | null;
  enforcement: SpendingEnforcement;
  period: SpendingPeriod;
  current: number;
  periodStart: Date;
  status: SpendingStatus;
  alertedAt: Date | null;
  /** Changed since last written. */
  dirty: boolean;
  /** Its last write was refused: reported once, until a write succeeds. */
  failing: boolean;
};

type Row = {
  spending_limit: string | number | null;
  spending_enforcement: SpendingEnforcement;
  spending_limit_period: SpendingPeriod;
  spending_current: string | number;
  spending_period_start: Date | string;
  spending_status: SpendingStatus;
  spending_alerted_at: Date | string | null;
};

/**
 * How long a change may wait in memory before it is written: more requests share a write, and on
 * the embedded database every write is a commit to disk (at 20 ms they took a tenth of a core at
 * 1,000 req/s). Only a crash loses what waits; SIGTERM and SIGINT write it out.
 */
const WRITE_DELAY_MS = 250;

const READ = `SELECT spending_limit, spending_enforcement, spending_limit_period, spending_current,
  spending_period_start, spending_status, spending_alerted_at FROM gates WHERE id = $1::uuid`;

const WRITE = `UPDATE gates AS g SET
    spending_current = v.current, spending_period_start = v.period_start,
    spending_status = v.status, spending_alerted_at = v.alerted_at
  FROM jsonb_to_recordset($1::jsonb) AS v(id uuid, current numeric, period_start timestamptz, status text, alerted_at timestamptz)
  WHERE g.id = v.id`;

function stateOf(gateId: string, row: Row): GateSpending {
  return {
    gateId,
    limit: row.spending_limit === null ? null : Number(row.spending_limit),
    enforcement: row.spending_enforcement,
    period: row.spending_limit_period,
    current: Number(row.spending_current),
    periodStart: new Date(row.spending_period_start),
    status: row.spending_status,
    alertedAt: row.spending_alerted_at === null ? null : new Date(row.spending_alerted_at),
    dirty: false,
    failing: false,
  };
}

/**
 * The status follows spending (holds included): suspended once a block limit is reached, active
 * again when holds are let go below it. A request too big for what is left suspends nothing.
 */
function follow(s: GateSpending): void {
  s.status = s.enforcement === 'block' && s.limit !== null && s.current >= s.limit ? 'suspended' : 'active';
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

export class LocalLedger implements SpendingLedger {
  private readonly gates = new Map<string, GateSpending>();
  private readonly loading = new Map<string, Promise<GateSpending | null>>();
  /** Gates whose settings are being changed: requests wait until the new settings are loaded. */
  private readonly barriers = new Map<string, Promise<void>>();
  private writing: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  async reserve(gateId: string, amount: number): Promise<Reserved> {
    const s = await this.load(gateId);
    if (!s) return { refused: true, reached: true, remaining: 0, limit: 0, spent: 0 };
    roll(s, new Date());
    // A limit reached refuses even a request that costs nothing.
    if (
      s.enforcement === 'block' &&
      s.limit !== null &&
      (s.current >= s.limit || s.current + amount > s.limit)
    ) {
      // Too big for what is left refuses this request only; the status follows spending alone.
      const remaining = Math.max(0, s.limit - s.current);
      return { refused: true, reached: remaining <= 0, remaining, limit: s.limit, spent: s.current };
    }
    s.current += amount;
    follow(s);
    s.dirty = true;
    return { gateId, amount, periodStart: s.periodStart };
  }

  async settle(reservation: Reservation, actual: number): Promise<void> {
    const s = await this.load(reservation.gateId);
    if (!s) return;
    const usd = settledUsd(actual, reservation.amount);
    if (s.periodStart.getTime() === reservation.periodStart.getTime()) {
      s.current = Math.min(Math.max(0, s.current - reservation.amount + usd), MAX_USD);
    } else {
      roll(s, new Date());
      s.current = Math.min(s.current + usd, MAX_USD);
    }
    follow(s);
    s.dirty = true;
    this.schedule();
  }

  async add(gateId: string, amount: number): Promise<Settlement> {
    const s = await this.load(gateId);
    if (!s) return { overLimit: false, crossed: false };
    const now = new Date();
    roll(s, now);
    s.current = Math.min(s.current + recordableUsd(amount), MAX_USD);
    s.dirty = true;
    const overLimit = s.limit !== null && s.current >= s.limit;
    const crossed =
      s.enforcement === 'alert_only' &&
      overLimit &&
      (s.alertedAt === null || s.alertedAt.getTime() < s.periodStart.getTime());
    if (crossed) s.alertedAt = now;
    this.schedule();
    return { overLimit, crossed, current: s.current };
  }

  /** Reads (the gate's page, the API) see the counters this process holds, written or not. */
  held(gateId: string): HeldSpending | undefined {
    const s = this.gates.get(gateId);
    return s && { current: s.current, periodStart: s.periodStart };
  }

  /**
   * Writes what this process holds, then lets the database decide with the new settings; the
   * next request reloads the gate from there (and waits meanwhile).
   */
  async settingsChanged(gateId: string): Promise<void> {
    let release: () => void = () => {};
    this.barriers.set(
      gateId,
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    try {
      await this.loading.get(gateId)?.catch(() => {});
      if (this.gates.get(gateId)?.dirty) await this.flush();
      // Its counter could not be written: deciding from the row would lose it, so nothing changes.
      if (this.gates.get(gateId)?.dirty) {
        throw new Error(`spending: the counter of gate ${gateId} cannot be written; its settings wait`);
      }
      this.gates.delete(gateId);
      await reevaluateSpendingStatus(gateId);
    } finally {
      this.barriers.delete(gateId);
      release();
    }
  }

  async settled(): Promise<void> {
    await rowSettlementsLanded();
    await this.flush();
  }

  /** Writes what is left; what the database refuses is reported, never thrown (shutdown goes on). */
  async close(): Promise<void> {
    this.closed = true;
    await rowSettlementsLanded();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush().catch((error) => console.error('spending: could not write the counters', error));
    for (const s of this.gates.values()) {
      if (s.dirty) console.error('spending: closing without writing gate', s.gateId, 'at', s.current, 'USD');
    }
  }

  private async load(gateId: string): Promise<GateSpending | null> {
    const barrier = this.barriers.get(gateId);
    if (barrier) await barrier;
    const known = this.gates.get(gateId);
    if (known) return known;
    let pending = this.loading.get(gateId);
    if (!pending) {
      pending = sql()
        .query<Row>(READ, [gateId])
        .then(([row]) => {
          if (!row) return null;
          const state = stateOf(gateId, row);
          // Read before a settings change finished: the change's reload must win, so keep nothing.
          if (!this.barriers.has(gateId)) this.gates.set(gateId, state);
          return state;
        })
        // Whatever happens, the next request reads afresh: a failed read must not stick.
        .finally(() => this.loading.delete(gateId));
      this.loading.set(gateId, pending);
    }
    return pending;
  }

  /**
   * Group commit: one write at a time, each carrying every change made before it started. A
   * caller arriving while a write runs waits for the next one, which takes all that arrived.
   */
  private async write(): Promise<void> {
    const batch = [...this.gates.values()].filter((s) => s.dirty);
    if (batch.length === 0) return;
    for (const s of batch) s.dirty = false;
    try {
      await this.writeRows(batch);
      for (const s of batch) this.written(s);
    } catch (error) {
      if (batch.length === 1) return this.refused(batch[0] as GateSpending, error);
      // One refused row fails the statement: the others are written one by one, without it.
      for (const s of batch) {
        await this.writeRows([s]).then(
          () => this.written(s),
          (e) => this.refused(s, e),
        );
      }
    }
  }

  private writeRows(batch: GateSpending[]): Promise<unknown> {
    const rows = batch.map((s) => ({
      id: s.gateId,
      current: s.current.toFixed(10),
      period_start: s.periodStart.toISOString(),
      status: s.status,
      alerted_at: s.alertedAt?.toISOString() ?? null,
    }));
    return sql().query(WRITE, [JSON.stringify(rows)]);
  }

  private written(s: GateSpending): void {
    if (s.failing) console.error('spending: gate', s.gateId, 'is written again');
    s.failing = false;
  }

  /** A gate whose row the database refused: it stays to be written, and is reported once. */
  private refused(s: GateSpending, error: unknown): void {
    s.dirty = true;
    if (!s.failing) console.error('spending: could not write the counter of gate', s.gateId, error);
    s.failing = true;
    this.schedule();
  }

  /** Write-behind: changes go out within WRITE_DELAY_MS, many requests per statement. */
  private schedule(): void {
    if (this.closed) return;
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.flush().catch((error) => console.error('spending: could not write the counters', error));
    }, WRITE_DELAY_MS);
  }

  private flush(): Promise<void> {
    if (!this.writing) {
      this.writing = this.write().finally(() => {
        this.writing = null;
      });
      return this.writing;
    }
    this.queued ??= this.writing
      .catch(() => {})
      .then(() => {
        this.queued = null;
        return this.flush();
      });
    return this.queued;
  }
}
