/**
 * Where a request's spending is decided and recorded. Two ledgers follow the same rules:
 *
 * - SQL (PostgreSQL): every decision is one atomic statement on the gate's row, so several
 *   gateway processes sharing the database can never push a block gate past its limit.
 * - Local (the embedded PGlite, which one process owns): decisions are made in memory
 *   (localLedger.ts).
 */
import { reevaluateSpendingStatus, type SpendingCounters } from '../domain/spending.ts';
import { writtenBehind } from './groupCommit.ts';
import { type RowCounters, type RowScope, rowSettlementsLanded } from './scopeRows.ts';
import {
  addSpending,
  createSpendingAccumulator,
  isRefusal,
  type Refusal,
  type Reservation,
  type Reserved,
  reserve,
  type Settlement,
  settle,
} from './spending.ts';
import { chargesMore } from './usage.ts';

export type { Refusal, Reservation, Reserved, Settlement };
export { isRefusal };

/** One scope a reservation spans: its counter, its limit, where it is durable. */
export type ScopeSpec =
  | { kind: 'gate'; gateId: string; periodStart: Date; limit: number }
  | { kind: 'row'; row: RowScope; periodStart: Date; limit: number }
  | { kind: 'session'; sessionId: string; limit: number };

/** A reservation over several scopes at once; `id` makes its settlement idempotent. */
export type ScopedReservation = Reservation & { id: string; scopes: ScopeSpec[] };

export type ScopedRefusal = { refusedAt: number; refusal: Refusal; idle: boolean };

export interface SpendingLedger extends SpendingCounters {
  /**
   * Reserves a block gate's worst case, or refuses: the limit is reached (the gate is suspended),
   * or the amount does not fit in what is left (the gate stays active for smaller requests).
   */
  reserve(gateId: string, amount: number): Promise<Reserved>;
  /**
   * A ledger that decides every scope of a request in one step (Redis, shared by processes):
   * reserves in all of them or refuses naming the first that does not fit.
   */
  reserveScopes?(scopes: ScopeSpec[], amount: number): Promise<ScopedReservation | ScopedRefusal>;
  /**
   * Replaces a reservation with what the request actually cost (0 if it failed). It may be
   * written behind (the SQL ledger's is); a later reservation in this process, settled() and
   * close() see it.
   */
  settle(reservation: Reservation, actual: number): Promise<void>;
  /** Keys' and end users' counters, when this ledger keeps them (else their rows decide: scopeRows.ts). */
  rows?: RowCounters;
  /** Adds the cost of a request on a gate without a block limit. */
  add(gateId: string, amount: number, hasLimit: boolean): Promise<Settlement>;
  close(): Promise<void>;
}

export function createSqlLedger(): SpendingLedger {
  // Gates without a limit enforce nothing: their costs are summed and written every 250 ms.
  const accumulator = createSpendingAccumulator();
  // A settlement is written behind the answer when it gives back part of its hold
  // (groupCommit.ts's writtenBehind); a reservation made after it in this process is decided after
  // it (spending.ts: a gate's calls go in order, settlements first in a statement).
  const behind = writtenBehind();
  const settleBehind = (reservation: Reservation, actual: number): Promise<void> => {
    const waitedFor = chargesMore(actual, reservation.amount);
    return behind.add(
      reservation.gateId,
      settle(reservation, actual, { linger: !waitedFor }).catch((error) =>
        console.error('spending: could not record', actual, 'USD for gate', reservation.gateId, error),
      ),
      waitedFor,
    );
  };
  const landed = () => Promise.all([behind.landed(), rowSettlementsLanded()]);
  return {
    reserve,
    settle: settleBehind,
    add: async (gateId, amount, hasLimit) => {
      if (hasLimit) return addSpending(gateId, amount);
      accumulator.add(gateId, amount);
      return { overLimit: false, crossed: false };
    },
    held: () => undefined,
    settingsChanged: reevaluateSpendingStatus,
    settled: async () => {
      await landed();
      await accumulator.flush();
    },
    close: async () => {
      await landed();
      await accumulator.close();
    },
  };
}
