/**
 * The ledger of several gateway processes (REDIS_URL): every limit a request spends against is
 * decided in one Lua script, so all processes see one set of counters and a request reserves in
 * every scope or in none.
 *
 * - Counters: one Redis hash per scope and period, `s` (spent) and `r` (held by requests under
 *   way), in units of 1e-8 USD (the ledger's precision), so sums are exact integers.
 * - Reservations are leases: each process renews the leases of its requests under way; one whose
 *   process died expires and any process's sweeper lets go of what it held. A settlement that
 *   arrives after its lease expired still charges what was spent, once (a marker per reservation).
 * - PostgreSQL stays the durable ledger: the settling process writes its gate charges there at
 *   once, many settlements a statement, idempotent by reservation id (spending_settlements). The
 *   settlement script also puts them on a Redis stream, which the process clears once they are
 *   written; what a dead process left there is written by the others after STREAM_GRACE_MS. A
 *   Redis restart loses the stream but not the processes' own copies. Sessions are written by
 *   settleSession, as without Redis.
 * - Counters missing from Redis (a restart: Redis keeps nothing on disk) are loaded from
 *   PostgreSQL when first needed. After a restart, block-limited requests are refused for a short
 *   fence while the processes hold their requests under way again.
 * - Redis unreachable: block-limited requests are refused (503 spending_unavailable); settlements
 *   wait in memory and are retried, and written straight to PostgreSQL at shutdown.
 *
 * Gates without a block limit (nothing to decide) are counted as without Redis (the SQL ledger).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { sql } from '../db/client.ts';
import { DomainError } from '../domain/errors.ts';
import {
  createSqlLedger,
  type Reservation,
  type ScopedRefusal,
  type ScopedReservation,
  type ScopeSpec,
  type SpendingLedger,
} from './ledger.ts';
import { applyRowSettlement, type RowScope, rowSpent } from './scopeRows.ts';
import { MAX_USD, settledUsd } from './usage.ts';

/** 1e-8 USD: the precision of the ledger's numeric(18, 8) columns. */
const UNIT = 1e8;
const toUnits = (usd: number) => Math.round(Math.min(Math.max(usd, 0), MAX_USD) * UNIT);
/** A worst case is rounded up: a hold never covers less than it was asked. */
const toUnitsUp = (usd: number) => Math.ceil(Math.min(Math.max(usd, 0), MAX_USD) * UNIT - 1e-6);
const fromUnits = (units: number) => units / UNIT;

export type RedisLedgerOptions = {
  /** Key prefix, as a hash tag: every key lands in one slot, as a multi-key script requires. */
  prefix: string;
  leaseMs: number;
  /** How long block-limited requests wait after Redis restarted empty. */
  fenceMs: number;
};

/** How long a settled reservation's marker lives: longer than any request and its retries. */
const DONE_TTL_S = 2 * 86_400;
/**
 * A counter untouched for this long is dropped (PostgreSQL has it). Every script that touches one
 * renews it, so none expires under a request in flight (whose lease is seconds).
 */
const COUNTER_TTL_S = 40 * 86_400;

// Amounts go to HINCRBY as the strings they came as: integers up to 2^63, whatever Lua's doubles.
// KEYS: epoch, leases, reservations, done marker, scope keys... ARGV: id, amount, lease ms, fence ms, limits...
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fence = redis.call('GET', KEYS[1])
if not fence then
  redis.call('SET', KEYS[1], tostring(now + tonumber(ARGV[4])))
  if tonumber(ARGV[4]) > 0 then return {'fenced'} end
elseif now < tonumber(fence) then return {'fenced'} end
-- Settled already (at nothing, its caller having given up on a slow Redis): holds nothing.
if redis.call('EXISTS', KEYS[4]) == 1 then return {'done'} end
local missing = {}
for i = 5, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 0 then missing[#missing + 1] = tostring(i - 4) end
end
if #missing > 0 then return {'load', unpack(missing)} end
local amount = tonumber(ARGV[2])
for i = 5, #KEYS do
  local v = redis.call('HMGET', KEYS[i], 's', 'r')
  local s, r, lim = tonumber(v[1]) or 0, tonumber(v[2]) or 0, tonumber(ARGV[i])
  if s + r >= lim or s + r + amount > lim then
    return {'refused', tostring(i - 4), v[1] or '0', v[2] or '0', ARGV[i]}
  end
end
for i = 5, #KEYS do
  redis.call('HINCRBY', KEYS[i], 'r', ARGV[2])
  redis.call('EXPIRE', KEYS[i], ${COUNTER_TTL_S})
end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2] .. '|' .. table.concat(KEYS, '|', 5))
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
return {'ok'}`;

// KEYS: leases, reservations, done marker, outbox, scope keys... ARGV: id, actual, done ttl s, outbox entry
const SETTLE = `
if redis.call('EXISTS', KEYS[3]) == 1 then return {'done'} end
local missing = {}
for i = 5, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 0 then missing[#missing + 1] = tostring(i - 4) end
end
if #missing > 0 then return {'load', unpack(missing)} end
local rec = redis.call('HGET', KEYS[2], ARGV[1])
if rec then
  local held = string.match(rec, '^([^|]+)')
  for i = 5, #KEYS do redis.call('HINCRBY', KEYS[i], 'r', '-' .. held) end
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('ZREM', KEYS[1], ARGV[1])
end
for i = 5, #KEYS do
  if tonumber(ARGV[2]) > 0 then redis.call('HINCRBY', KEYS[i], 's', ARGV[2]) end
  redis.call('EXPIRE', KEYS[i], ${COUNTER_TTL_S})
end
redis.call('SET', KEYS[3], '1', 'EX', tonumber(ARGV[3]))
if ARGV[4] ~= '' then return {'ok', redis.call('XADD', KEYS[4], '*', 'e', ARGV[4])} end
return {'ok'}`;

// A lease renewed, or, when Redis lost it (a restart), the hold made again without a check: the
// request is under way and will spend. KEYS: leases, reservations, done marker, scope keys...
// ARGV: id, amount, lease ms
const RENEW = `
if redis.call('EXISTS', KEYS[3]) == 1 then return {'done'} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
  for i = 4, #KEYS do redis.call('EXPIRE', KEYS[i], ${COUNTER_TTL_S}) end
  return {'ok'}
end
local missing = {}
for i = 4, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 0 then missing[#missing + 1] = tostring(i - 3) end
end
if #missing > 0 then return {'load', unpack(missing)} end
for i = 4, #KEYS do
  redis.call('HINCRBY', KEYS[i], 'r', ARGV[2])
  redis.call('EXPIRE', KEYS[i], ${COUNTER_TTL_S})
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. '|' .. table.concat(KEYS, '|', 4))
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
return {'held again'}`;

// An expired lease let go, if it is still the one read. KEYS: leases, reservations, scope keys...
// ARGV: id, the record as read
const EXPIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expires = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expires or tonumber(expires) > now or redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
local held = string.match(ARGV[2], '^([^|]+)')
for i = 3, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('HINCRBY', KEYS[i], 'r', '-' .. held) end
end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
return 1`;

// A counter loaded from PostgreSQL, unless another process loaded it first. KEYS: scope
// ARGV: spent, ttl s
const INIT = `
if redis.call('HSETNX', KEYS[1], 's', ARGV[1]) == 1 then
  redis.call('HSETNX', KEYS[1], 'r', '0')
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
end
return 1`;

/** A settlement left on the stream this long was not written by its process: another writes it. */
const STREAM_GRACE_MS = 10_000;

/** A charge to write to PostgreSQL: a gate's (`g`), or a key's or end user's row (`row`). */
type Entry = { r: string; g?: string; row?: RowScope; p: string; a: string };

const NEW_CURRENT = `CASE
    WHEN gates.spending_period_start >= latest.p + CASE WHEN gates.spending_limit_period = 'daily'
         THEN interval '1 day' ELSE interval '1 month' END THEN gates.spending_current
    WHEN gates.spending_period_start >= latest.p THEN LEAST(gates.spending_current + latest.a, ${MAX_USD})
    ELSE LEAST(latest.a, ${MAX_USD}) END`;

/** Applies gate charges to PostgreSQL once per (reservation, gate): a batch may be retried. */
const APPLY = `WITH v AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(r uuid, g uuid, p timestamptz, a numeric)
  ), fresh AS (
    INSERT INTO spending_settlements (reservation_id, scope)
    SELECT r, 'g:' || g::text FROM v ON CONFLICT DO NOTHING RETURNING reservation_id, scope
  ), latest AS (
    SELECT v.g, v.p, sum(v.a) AS a FROM v JOIN fresh ON fresh.reservation_id = v.r AND fresh.scope = 'g:' || v.g::text
    WHERE v.p = (SELECT max(w.p) FROM v AS w WHERE w.g = v.g)
    GROUP BY v.g, v.p
  )
  -- Every value computed from the row being updated, never from a snapshot read before it: two
  -- processes writing the same gate at once each add to what the other committed.
  -- A stored period start at or after the entry's period start (but before its end) is the same
  -- period: the counter grows. Before it, the entry starts a new period; after the end, the entry
  -- belongs to a period that is over and changes nothing.
  UPDATE gates SET
    spending_current = ${NEW_CURRENT},
    spending_period_start = GREATEST(gates.spending_period_start, latest.p),
    spending_status = CASE WHEN gates.spending_enforcement = 'block' AND gates.spending_limit IS NOT NULL
      AND ${NEW_CURRENT} >= gates.spending_limit THEN 'suspended' ELSE 'active' END
  FROM latest WHERE gates.id = latest.g`;

/**
 * A write the database will refuse however often it is tried: a broken constraint (a gate or key
 * deleted meanwhile) or a value it cannot hold (SQLSTATE classes 22 and 23).
 */
function isPermanent(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

export class SpendingUnavailable extends DomainError {
  constructor(why: string) {
    super(
      'spending_unavailable',
      `Spending limits cannot be checked right now (${why}); requests through a block spending limit are refused until they can. Try again shortly.`,
    );
  }
}

type InFlight = { reservation: ScopedReservation; keys: string[] };

export class RedisLedger implements SpendingLedger {
  private readonly sqlLedger = createSqlLedger();
  private readonly k: (name: string) => string;
  /** Reservations under way in this process: their leases are renewed. */
  private readonly inFlight = new Map<string, InFlight>();
  /** Settlements Redis could not take yet, retried until it can. */
  private readonly pending = new Map<string, { reservation: ScopedReservation; actual: number }>();
  private readonly timers: NodeJS.Timeout[] = [];
  /** Gate charges settled in Redis, to be written to PostgreSQL (keyed by their stream id). */
  private readonly unwritten = new Map<string, Entry[]>();
  private writing: Promise<void> | null = null;
  private writeFailing = false;
  private closed = false;
  private timerFailing = false;

  constructor(
    private readonly redis: Redis,
    private readonly opts: RedisLedgerOptions,
  ) {
    this.k = (name) => `{${opts.prefix}}:${name}`;
    // Each task runs alone (a slow Redis does not pile up its runs) and is reported once an
    // outage (a Redis that is down is reported by the connection).
    const every = (ms: number, run: () => Promise<unknown>) => {
      let running = false;
      const timer = setInterval(() => {
        if (running) return;
        running = true;
        run()
          .then(() => {
            this.timerFailing = false;
          })
          .catch((error) => {
            if (
              !(error instanceof SpendingUnavailable) &&
              this.redis.status === 'ready' &&
              !this.timerFailing
            ) {
              console.error('spending: a ledger task failed', error);
            }
            this.timerFailing = true;
          })
          .finally(() => {
            running = false;
          });
      }, ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(Math.max(100, Math.floor(opts.leaseMs / 3)), () => this.renew());
    every(Math.max(100, Math.floor(opts.leaseMs / 6)), () => this.sweep());
    every(STREAM_GRACE_MS / 2, () => this.writeLeftovers());
    every(500, () => this.retryPending());
    // Redis back (perhaps empty, after a restart): what it took before is written to PostgreSQL
    // first (counters it lost are loaded from there), then the requests under way are held again.
    if (redis.status === 'ready') void this.startFence().catch(() => {});
    redis.on('ready', () => {
      void this.startFence()
        .then(() => this.write())
        .catch(() => {})
        .then(() => this.renew())
        .then(() => this.retryPending())
        .catch(() => {});
    });
  }

  private keyOf(scope: ScopeSpec): string {
    switch (scope.kind) {
      case 'gate':
        return this.k(`g:${scope.gateId}:${scope.periodStart.getTime()}`);
      case 'session':
        return this.k(`s:${scope.sessionId}`);
      case 'row': {
        const { row } = scope;
        // An end user is any string the client sent: hashed, so a key holds no separator of its own.
        const id =
          row.kind === 'key'
            ? `k:${row.keyId}`
            : `e:${row.gateId}:${createHash('sha256').update(row.endUser).digest('hex').slice(0, 32)}`;
        return this.k(`${id}:${scope.periodStart.getTime()}`);
      }
    }
  }

  /** What a settlement of `usd` writes to PostgreSQL: each gate's and each row's charge. */
  private entriesOf(r: ScopedReservation, usd: number): Entry[] {
    if (usd <= 0) return [];
    const a = usd.toFixed(8);
    return r.scopes.flatMap((s): Entry[] => {
      const p = s.kind === 'session' ? '' : s.periodStart.toISOString();
      if (s.kind === 'gate') return [{ r: r.id, g: s.gateId, p, a }];
      if (s.kind === 'row') return [{ r: r.id, row: s.row, p, a }];
      return [];
    });
  }

  /** Writes charges to PostgreSQL, each once per reservation and scope. */
  private async apply(entries: Entry[]): Promise<void> {
    const gates = entries.filter((e) => e.g);
    if (gates.length > 0) await sql().query(APPLY, [JSON.stringify(gates)]);
    for (const e of entries) {
      if (e.row) await applyRowSettlement(e.r, e.row, new Date(e.p), Number(e.a));
    }
  }

  /** Reserves `amount` in every scope at once, or refuses naming the first scope it does not fit. */
  async reserveScopes(scopes: ScopeSpec[], amount: number): Promise<ScopedReservation | ScopedRefusal> {
    const id = randomUUID();
    const units = toUnitsUp(amount);
    const keys = scopes.map((s) => this.keyOf(s));
    const limits = scopes.map((s) => String(toUnits(s.limit)));
    const reservation: ScopedReservation = {
      id,
      scopes,
      amount: fromUnits(units),
      gateId: scopes[0]?.kind === 'gate' ? scopes[0].gateId : '',
      periodStart: scopes[0]?.kind === 'gate' ? scopes[0].periodStart : new Date(0),
    };
    for (let tries = 0; ; tries++) {
      let result: string[];
      try {
        result = await this.run(
          'reserve',
          RESERVE,
          [this.k('epoch'), this.k('leases'), this.k('res'), this.k(`d:${id}`), ...keys],
          [id, String(units), String(this.opts.leaseMs), String(this.opts.fenceMs), ...limits],
        );
      } catch (error) {
        // The script may still run after the call gave up (a slow Redis): a settlement at nothing,
        // sent after it on the same connection, lets its hold go.
        this.pending.set(id, { reservation, actual: 0 });
        throw error;
      }
      const [status, ...rest] = result;
      if (status === 'load' && tries < 3) {
        await this.load(rest.map((i) => scopes[Number(i) - 1] as ScopeSpec)).catch((error) => {
          console.error('spending: could not load counters from the database', error);
          throw new SpendingUnavailable('the database cannot be read');
        });
        continue;
      }
      if (status === 'fenced')
        throw new SpendingUnavailable('the shared ledger is being rebuilt after Redis restarted');
      if (status === 'refused') {
        const [at, spent, held, limit] = rest.map(Number) as [number, number, number, number];
        const remaining = Math.max(0, limit - spent - held);
        return {
          refusedAt: at - 1,
          idle: held === 0,
          refusal: {
            refused: true,
            reached: remaining <= 0,
            remaining: fromUnits(remaining),
            limit: fromUnits(limit),
            spent: fromUnits(spent + held),
          },
        };
      }
      if (status !== 'ok') {
        console.error(`spending: unexpected answer from Redis: ${result.join(' ')}`);
        throw new SpendingUnavailable('the shared ledger gave an answer it should not');
      }
      this.inFlight.set(id, { reservation, keys });
      return reservation;
    }
  }

  reserve(): never {
    throw new Error('RedisLedger reserves through reserveScopes');
  }

  /** Charges what the request cost to every scope of the reservation and lets go of its hold. */
  async settle(reservation: Reservation, actual: number): Promise<void> {
    const r = reservation as ScopedReservation;
    const usd = settledUsd(actual, r.amount);
    try {
      await this.settleInRedis(r, usd);
    } catch (error) {
      // Paid for: kept until Redis takes it (retried), or written to PostgreSQL at shutdown.
      if (!this.pending.has(r.id)) this.pending.set(r.id, { reservation: r, actual: usd });
      if (!(error instanceof SpendingUnavailable))
        console.error('spending: settlement waits for Redis', error);
    }
  }

  private async settleInRedis(r: ScopedReservation, usd: number): Promise<void> {
    const keys = r.scopes.map((s) => this.keyOf(s));
    const units = toUnits(usd);
    const entries = this.entriesOf(r, fromUnits(units));
    for (let tries = 0; ; tries++) {
      const result = await this.run(
        'settle',
        SETTLE,
        [this.k('leases'), this.k('res'), this.k(`d:${r.id}`), this.k('outbox'), ...keys],
        [r.id, String(units), String(DONE_TTL_S), entries.length > 0 ? JSON.stringify(entries) : ''],
      );
      if (result[0] === 'load' && tries < 3) {
        await this.load(result.slice(1).map((i) => r.scopes[Number(i) - 1] as ScopeSpec));
        continue;
      }
      if (result[0] !== 'ok' && result[0] !== 'done')
        throw new Error(`spending: unexpected answer from Redis: ${result.join(' ')}`);
      this.inFlight.delete(r.id);
      this.pending.delete(r.id);
      if (result[1]) {
        this.unwritten.set(result[1], entries);
        void this.write().catch(() => {});
      }
      return;
    }
  }

  add(gateId: string, amount: number, hasLimit: boolean) {
    return this.sqlLedger.add(gateId, amount, hasLimit);
  }

  held() {
    return undefined;
  }

  settingsChanged(gateId: string) {
    return this.sqlLedger.settingsChanged(gateId);
  }

  /** This process's settlements are in PostgreSQL. */
  async settled(): Promise<void> {
    await this.retryPending();
    await this.write();
    await this.sqlLedger.settled();
  }

  /** What PostgreSQL holds of a scope's spending this period; null when the scope is gone. */
  private async storedSpent(scope: ScopeSpec): Promise<number | null> {
    if (scope.kind === 'row') return rowSpent(scope.row, scope.periodStart);
    const [row] =
      scope.kind === 'gate'
        ? await sql().query<{ spent: string | number }>(
            `SELECT CASE WHEN spending_period_start >= $2 THEN spending_current ELSE 0 END AS spent
             FROM gates WHERE id = $1::uuid`,
            [scope.gateId, scope.periodStart],
          )
        : await sql().query<{ spent: string | number }>(
            'SELECT spending_current AS spent FROM agent_sessions WHERE id = $1::uuid',
            [scope.sessionId],
          );
    return row ? Number(row.spent) : null;
  }

  /** Loads missing counters from PostgreSQL (another process may have loaded them first). */
  private async load(scopes: ScopeSpec[]): Promise<void> {
    for (const scope of scopes) {
      const stored = await this.storedSpent(scope);
      // A gate, key or session gone: nothing may be spent on it.
      const spent = stored === null ? Number.MAX_SAFE_INTEGER : toUnits(stored);
      await this.run('init', INIT, [this.keyOf(scope)], [String(spent), String(COUNTER_TTL_S)]);
    }
  }

  private async run(name: string, script: string, keys: string[], args: string[]): Promise<string[]> {
    const command = `gatehouse_${name}`;
    const r = this.redis as Redis & Record<string, (...a: unknown[]) => Promise<unknown>>;
    if (!r[command]) this.redis.defineCommand(command, { lua: script });
    try {
      const answer = await (r[command] as (...a: unknown[]) => Promise<unknown>)(
        keys.length,
        ...keys,
        ...args,
      );
      return (Array.isArray(answer) ? answer : [answer]).map(String);
    } catch (error) {
      // Fail closed, whatever went wrong: a limit that cannot be checked refuses.
      if (this.redis.status === 'ready') console.error(`spending: Redis ${name} failed`, error);
      throw new SpendingUnavailable('the shared ledger, Redis, is unreachable');
    }
  }

  /**
   * A Redis without the ledger's epoch has just started (or restarted empty): block-limited
   * requests wait out the fence from now, while every process, reconnecting too, holds its
   * requests under way again. Started at connection, so a gateway's first start has usually
   * passed it before its first request.
   */
  private async startFence(): Promise<void> {
    const [seconds, micros] = await this.redis.time();
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    await this.redis.set(this.k('epoch'), String(now + this.opts.fenceMs), 'NX');
  }

  /** Renews the leases of this process's requests under way (and holds them again after a restart). */
  private async renew(): Promise<void> {
    for (const [id, { reservation, keys }] of [...this.inFlight]) {
      if (this.redis.status !== 'ready') return;
      // One failure does not leave the others unrenewed.
      await this.renewOne(id, reservation, keys).catch(() => {});
    }
  }

  private async renewOne(id: string, reservation: ScopedReservation, keys: string[]): Promise<void> {
    for (let tries = 0; tries < 3; tries++) {
      const result = await this.run(
        'renew',
        RENEW,
        [this.k('leases'), this.k('res'), this.k(`d:${id}`), ...keys],
        [id, String(toUnitsUp(reservation.amount)), String(this.opts.leaseMs)],
      );
      if (result[0] === 'done') this.inFlight.delete(id);
      if (result[0] !== 'load') return;
      // Counters lost (a restart): loaded, then the hold is made again at once.
      await this.load(result.slice(1).map((i) => reservation.scopes[Number(i) - 1] as ScopeSpec));
    }
  }

  /**
   * Lets go of reservations whose lease expired: their process died, or lost Redis for too long.
   * Pages through them all, past this process's own (still under way, renewed by it).
   */
  private async sweep(): Promise<void> {
    const PAGE = 200;
    for (let offset = 0; this.redis.status === 'ready'; ) {
      const expired = await this.redis.zrangebyscore(
        this.k('leases'),
        '-inf',
        Date.now(),
        'LIMIT',
        offset,
        PAGE,
      );
      for (const id of expired) {
        if (this.inFlight.has(id)) {
          offset++;
          continue;
        }
        const record = await this.redis.hget(this.k('res'), id);
        if (record === null) {
          await this.redis.zrem(this.k('leases'), id);
          continue;
        }
        const keys = record.split('|').slice(1);
        // Not let go (its lease was renewed meanwhile): stays in the set, so skipped next page.
        const released = await this.run(
          'expire',
          EXPIRE,
          [this.k('leases'), this.k('res'), ...keys],
          [id, record],
        );
        if (released[0] !== '1') offset++;
      }
      if (expired.length < PAGE) return;
    }
  }

  /**
   * Writes this process's settled charges to PostgreSQL, all that wait in one statement, then
   * clears them from the stream. Group commit: a call while a write runs joins the next. A failed
   * write is retried by one timer, never by a chain of them.
   */
  private write(): Promise<void> {
    const next = (this.writing ?? Promise.resolve()).then(() => this.writeOnce());
    const tail = next.catch(() => {});
    this.writing = tail;
    void tail.then(() => {
      if (this.writing === tail) this.writing = null;
    });
    return next;
  }

  private retryTimer: NodeJS.Timeout | null = null;

  private async writeOnce(): Promise<void> {
    if (this.unwritten.size === 0) return;
    const batch = [...this.unwritten];
    try {
      await this.applyEach(batch);
    } catch (error) {
      if (!this.writeFailing)
        console.error('spending: cannot write settlements to the database; retrying', error);
      this.writeFailing = true;
      if (!this.closed && !this.retryTimer) {
        this.retryTimer = setTimeout(() => {
          this.retryTimer = null;
          this.write().catch(() => {});
        }, 1_000);
        this.retryTimer.unref();
      }
      throw error;
    }
    if (this.writeFailing) console.error('spending: writing settlements to the database again');
    this.writeFailing = false;
  }

  /**
   * Writes stream entries to PostgreSQL and clears them: all in one statement, or, when that
   * fails, one entry at a time, so that one the database can never take (a charge to a gate
   * deleted meanwhile, say) is reported and set aside rather than holding up every other.
   */
  private async applyEach(batch: [string, Entry[]][]): Promise<void> {
    const written: string[] = [];
    try {
      await this.apply(batch.flatMap(([, entries]) => entries));
      written.push(...batch.map(([id]) => id));
    } catch (error) {
      if (batch.length === 1 && !isPermanent(error)) throw error;
      let failure: unknown = null;
      for (const [id, entries] of batch) {
        try {
          await this.apply(entries);
          written.push(id);
        } catch (e) {
          if (isPermanent(e)) {
            console.error(
              'spending: a settlement the database refuses is set aside',
              JSON.stringify(entries),
              e,
            );
            written.push(id);
          } else failure ??= e;
        }
      }
      if (failure) {
        this.forget(written);
        throw failure;
      }
    }
    this.forget(written);
  }

  /** Written (or set aside): no longer waiting, and the stream's copies are no longer needed. */
  private forget(ids: string[]): void {
    if (ids.length === 0) return;
    for (const id of ids) this.unwritten.delete(id);
    void this.redis.xdel(this.k('outbox'), ...ids).catch(() => {});
  }

  /** Writes what processes that died left on the stream (idempotent, if one was merely slow). */
  private async writeLeftovers(): Promise<void> {
    if (this.redis.status !== 'ready') return;
    const [seconds] = await this.redis.time();
    const before = Number(seconds) * 1000 - STREAM_GRACE_MS;
    const messages = (await this.redis.xrange(this.k('outbox'), '-', String(before), 'COUNT', 1000)) as [
      string,
      string[],
    ][];
    const theirs = messages.filter(([id]) => !this.unwritten.has(id));
    if (theirs.length === 0) return;
    await this.applyEach(
      theirs.map(([id, fields]): [string, Entry[]] => [id, JSON.parse(fields[1] as string) as Entry[]]),
    );
  }

  private async retryPending(): Promise<void> {
    for (const { reservation, actual } of [...this.pending.values()]) {
      if (this.redis.status !== 'ready') return;
      await this.settleInRedis(reservation, actual);
    }
  }

  /**
   * Stops the timers, writes this process's settlements to PostgreSQL, and those Redis never took
   * straight there too (idempotent: a later write of the same ids changes nothing).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.retryPending().catch(() => {});
    await this.write().catch((error) => console.error('spending: could not write the settlements', error));
    const left = [...this.pending.values()].flatMap(({ reservation, actual }) =>
      this.entriesOf(reservation, actual),
    );
    if (left.length > 0) {
      await this.apply(left).catch((error) =>
        console.error('spending: could not write', left.length, 'settlements', error),
      );
    }
    await this.sqlLedger.close();
  }
}
