/**
 * The ledger of the embedded database, which one process owns: decisions are made in memory,
 * where the single thread makes them atomic, and reads see them at once (held(), heldKey()). The
 * counters, gates' and keys' and end users' alike, are written behind, within WRITE_DELAY_MS, the
 * changes of every request in that time in one statement a table; close() (SIGTERM, SIGINT) writes
 * what is left, as the log writer does. A counter the database refuses to write holds up no other:
 * the batch is then written one by one, and the refused counter stays in memory (and is tried
 * again with the next write).
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
import {
  keyRowKey,
  type RowCounters,
  type RowRefusal,
  type RowReservation,
  type RowScope,
  rowCounter,
  rowKeyOf,
  rowPeriodStart,
  rowSettlementsLanded,
} from './scopeRows.ts';
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

/**
 * A key's or an end user's counter in this period (and the holds in it): read from its row once,
 * then decided here. Keys and end users are many more than gates: past MAX_ROWS, counters whose
 * changes are written are let go after a write (the row then says what they held).
 */
type RowSpending = {
  row: RowScope;
  current: number;
  periodStart: Date;
  dirty: boolean;
  failing: boolean;
};

const MAX_ROWS = 10_000;

// What memory holds replaces the row's counter; a period start never moves back (a `total` key's
// row keeps the day it started). An end user's row is made by its first write; a gate deleted
// meanwhile took its end users' rows with it, so none is made for it.
const KEY_WRITE = `UPDATE api_keys AS k SET
    spending_current = v.current, spending_period_start = GREATEST(k.spending_period_start, v.period_start)
  FROM jsonb_to_recordset($1::jsonb) AS v(id uuid, current numeric, period_start timestamptz)
  WHERE k.id = v.id`;

const END_USER_WRITE = `INSERT INTO end_user_spending (gate_id, end_user, spending_current, spending_period_start)
  SELECT v.gate_id, v.end_user, v.current, v.period_start
  FROM jsonb_to_recordset($1::jsonb) AS v(gate_id uuid, end_user text, current numeric, period_start timestamptz)
  WHERE EXISTS (SELECT 1 FROM gates g WHERE g.id = v.gate_id)
  ON CONFLICT (gate_id, end_user) DO UPDATE SET spending_current = EXCLUDED.spending_current,
    spending_period_start = GREATEST(end_user_spending.spending_period_start, EXCLUDED.spending_period_start)`;

/** A row's counter starts again at zero when the row's period has turned (never, for `total`). */
function rollRow(s: RowSpending, now: Date): void {
  const start = rowPeriodStart(s.row.period, now);
  if (start.getTime() > s.periodStart.getTime()) {
    s.current = 0;
    s.periodStart = start;
    s.dirty = true;
  }
}

/**
 * Replaces a hold with what the request cost, in the hold's period; once the counter has moved on
 * (`roll` brings it to now's), the cost is added to the period it is in.
 */
function replaceHold(
  s: { current: number; periodStart: Date },
  hold: { amount: number; periodStart: Date },
  actual: number,
  roll: () => void,
): void {
  const usd = settledUsd(actual, hold.amount);
  if (s.periodStart.getTime() === hold.periodStart.getTime()) {
    s.current = Math.min(Math.max(0, s.current - hold.amount + usd), MAX_USD);
  } else {
    roll();
    s.current = Math.min(s.current + usd, MAX_USD);
  }
}

/** Something whose counter is written behind: a gate's, a key's, an end user's. */
type Dirty = { dirty: boolean; failing: boolean };

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
  private readonly rowCounters = new Map<string, RowSpending>();
  private readonly rowLoading = new Map<string, Promise<RowSpending | null>>();
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
    replaceHold(s, reservation, actual, () => roll(s, new Date()));
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

  /** A key's counter as this process holds it, written or not (the keys API reads it). */
  heldKey(keyId: string): HeldSpending | undefined {
    const s = this.rowCounters.get(keyRowKey(keyId));
    return s && { current: s.current, periodStart: s.periodStart };
  }

  /**
   * Keys' and end users' counters, decided as gates' are: in memory, written behind. A key's
   * limit, period and enforcement are read from the key each request, so a change to them needs
   * nothing here: a period that has turned starts the counter again at zero, as the row would.
   */
  readonly rows: RowCounters = {
    reserve: async (row, limit, amount): Promise<RowReservation | RowRefusal> => {
      const reserved = await this.withRow(row, (s) => {
        s.row = row;
        rollRow(s, new Date());
        // A limit reached refuses even a request that costs nothing.
        if (s.current >= limit || s.current + amount > limit) {
          const remaining = Math.max(0, limit - s.current);
          return { refused: true, reached: remaining <= 0, remaining, limit, spent: s.current } as const;
        }
        s.current += amount;
        s.dirty = true;
        return { row, amount, periodStart: s.periodStart };
      });
      this.schedule();
      // No row: a key gone may spend nothing.
      return reserved ?? { refused: true, reached: true, remaining: 0, limit, spent: limit };
    },
    settle: async (reservation, actual) => {
      await this.withRow(reservation.row, (s) => {
        replaceHold(s, reservation, actual, () => rollRow(s, new Date()));
        s.dirty = true;
      });
      this.schedule();
    },
    add: async (row, amount) => {
      const usd = recordableUsd(amount);
      if (usd <= 0) return;
      await this.withRow(row, (s) => {
        s.row = row;
        rollRow(s, new Date());
        s.current = Math.min(s.current + usd, MAX_USD);
        s.dirty = true;
      });
      this.schedule();
    },
  };

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
    for (const s of this.rowCounters.values()) {
      if (s.dirty)
        console.error('spending: closing without writing', rowKeyOf(s.row), 'at', s.current, 'USD');
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
   * Runs `use` on a key's or an end user's counter, at once when it is held, else once it is read
   * from its row (an end user's may not exist yet; a key gone: `use` is not run). `use` runs in
   * the same turn as the lookup, so nothing lets the counter go in between.
   */
  private async withRow<T>(row: RowScope, use: (s: RowSpending) => T): Promise<T | undefined> {
    const key = rowKeyOf(row);
    const known = this.rowCounters.get(key);
    if (known) return use(known);
    let pending = this.rowLoading.get(key);
    if (!pending) {
      pending = rowCounter(row, rowPeriodStart(row.period, new Date()))
        .then((read) => (read ? { row, ...read, dirty: false, failing: false } : null))
        .finally(() => this.rowLoading.delete(key));
      this.rowLoading.set(key, pending);
    }
    const read = await pending;
    if (!read) return undefined;
    // Whoever comes first keeps what was read: a counter held meanwhile (or one let go after its
    // write, which its row then holds) is not replaced.
    let s = this.rowCounters.get(key);
    if (!s) {
      s = read;
      this.rowCounters.set(key, s);
    }
    return use(s);
  }

  /**
   * Group commit: one write at a time, each carrying every change made before it started. A
   * caller arriving while a write runs waits for the next one, which takes all that arrived.
   */
  private async write(): Promise<void> {
    await this.writeDirty(
      [...this.gates.values()],
      (batch) => this.writeRows(batch),
      (s) => `gate ${s.gateId}`,
    );
    const rows = [...this.rowCounters.values()];
    await this.writeDirty(
      rows.filter((s) => s.row.kind === 'key'),
      (batch) => this.writeRowCounters(KEY_WRITE, batch),
      (s) => `key ${(s.row as { keyId: string }).keyId}`,
    );
    await this.writeDirty(
      rows.filter((s) => s.row.kind === 'end_user'),
      (batch) => this.writeRowCounters(END_USER_WRITE, batch),
      (s) => `end user ${JSON.stringify((s.row as { endUser: string }).endUser)}`,
    );
    // Written counters are in their rows: past MAX_ROWS the oldest are let go, down to half, and
    // read again when needed.
    if (this.rowCounters.size > MAX_ROWS) {
      for (const [key, s] of this.rowCounters) {
        if (this.rowCounters.size <= MAX_ROWS / 2) break;
        if (!s.dirty) this.rowCounters.delete(key);
      }
    }
  }

  /** Writes the changed ones of `all` in one statement; if it is refused, one by one. */
  private async writeDirty<S extends Dirty>(
    all: S[],
    write: (batch: S[]) => Promise<unknown>,
    name: (s: S) => string,
  ): Promise<void> {
    const batch = all.filter((s) => s.dirty);
    if (batch.length === 0) return;
    for (const s of batch) s.dirty = false;
    try {
      await write(batch);
      for (const s of batch) this.written(s, name(s));
    } catch (error) {
      if (batch.length === 1) return this.refused(batch[0] as S, name(batch[0] as S), error);
      // One refused row fails the statement: the others are written one by one, without it.
      for (const s of batch) {
        await write([s]).then(
          () => this.written(s, name(s)),
          (e) => this.refused(s, name(s), e),
        );
      }
    }
  }

  private writeRowCounters(statement: string, batch: RowSpending[]): Promise<unknown> {
    const rows = batch.map((s) => ({
      ...(s.row.kind === 'key' ? { id: s.row.keyId } : { gate_id: s.row.gateId, end_user: s.row.endUser }),
      current: s.current.toFixed(10),
      period_start: s.periodStart.toISOString(),
    }));
    return sql().query(statement, [JSON.stringify(rows)]);
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

  private written(s: Dirty, name: string): void {
    if (s.failing) console.error(`spending: ${name} is written again`);
    s.failing = false;
  }

  /** A counter whose row the database refused: it stays to be written, and is reported once. */
  private refused(s: Dirty, name: string, error: unknown): void {
    s.dirty = true;
    if (!s.failing) console.error(`spending: could not write the counter of ${name}`, error);
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
