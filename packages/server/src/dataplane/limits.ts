/**
 * Every limit a request passes through, as one list of scopes: the gate that answers, the agent
 * gate it came through, the agent session. A request's worst case is reserved against every scope
 * that limits spending, all or none (a refusal lets go of the holds it made first), and what it
 * cost is charged to every gate it passed through, so an agent gate's spending is what its
 * sub-gates spent on its behalf. Keys and end users join as scopes of their own.
 * Knows nothing of HTTP: a refusal is a DomainError naming the limit that refused.
 */
import { DomainError } from '../domain/errors.ts';
import { periodStart, type SpendingPeriod } from '../domain/spending.ts';
import type { ApiKey, Gate } from '../generated/prisma/client.ts';
import { isRefusal, type Refusal, type Reservation, type ScopeSpec, type SpendingLedger } from './ledger.ts';
import { type RowReservation, type RowScope, rowPeriodStart, SQL_ROWS } from './scopeRows.ts';
import { type OpenSession, refuseSession, releaseSession, reserveSession } from './sessions.ts';

/**
 * A gate's place on the request's way: the gate asked (`gate`), or, through an orchestrated agent
 * gate, the `sub_gate` that answers and the `agent_gate` it came through.
 */
export type GateRole = 'gate' | 'agent_gate' | 'sub_gate';

export type LimitScope =
  | { kind: 'gate'; role: GateRole; gate: Gate; via?: { agent: Gate; role: string } }
  | { kind: 'end_user'; gate: Gate; endUser: string }
  | { kind: 'key'; key: ApiKey }
  | { kind: 'session'; session: OpenSession };

/** One scope's part of what a request holds. */
export type Hold = { scope: LimitScope; amount: number; reservation: Reservation | RowReservation | null };

/** Who a request is for, beyond its gate: the API key it came with and the end user it names. */
export type Requester = { apiKey?: ApiKey | undefined; endUser?: string | undefined };

const isRowHold = (r: Reservation | RowReservation): r is RowReservation => 'row' in r;

/** Where keys' and end users' counters are decided: the ledger's own, else their rows. */
const rowsOf = (ledger: SpendingLedger) => ledger.rows ?? SQL_ROWS;

/** A key's or an end user's counter, as scopeRows.ts keeps it. */
function rowOf(scope: Extract<LimitScope, { kind: 'key' | 'end_user' }>): RowScope {
  return scope.kind === 'key'
    ? { kind: 'key', keyId: scope.key.id, period: scope.key.spendingLimitPeriod }
    : {
        kind: 'end_user',
        gateId: scope.gate.id,
        endUser: scope.endUser,
        period: scope.gate.endUserSpendingLimitPeriod,
      };
}

function limitOf(scope: Extract<LimitScope, { kind: 'key' | 'end_user' }>): number {
  return Number(scope.kind === 'key' ? scope.key.spendingLimit : scope.gate.endUserSpendingLimit);
}

const isBlocking = (gate: Gate) => gate.spendingEnforcement === 'block' && gate.spendingLimit !== null;

/** Whether the scope has a limit a reservation must fit in. */
export const limits = (scope: LimitScope): boolean => {
  switch (scope.kind) {
    case 'gate':
      return isBlocking(scope.gate);
    case 'end_user':
      return scope.gate.endUserSpendingLimit !== null;
    case 'key':
      return scope.key.spendingEnforcement === 'block' && scope.key.spendingLimit !== null;
    case 'session':
      return scope.session.limit !== null;
  }
};

/**
 * The scopes of a request, in the order they are reserved: the answering gate, the agent gate
 * it came through (when it is another), the session last (its refusal has a status of its own).
 */
export function scopesOf(
  asked: Gate,
  answering: Gate,
  role: string | null,
  session: OpenSession | null,
  requester: Requester = {},
): LimitScope[] {
  const scopes: LimitScope[] = [];
  if (answering.id === asked.id) {
    scopes.push({ kind: 'gate', role: asked.gateType === 'agent' ? 'agent_gate' : 'gate', gate: asked });
  } else {
    scopes.push({
      kind: 'gate',
      role: 'sub_gate',
      gate: answering,
      via: { agent: asked, role: role ?? '' },
    });
    scopes.push({ kind: 'gate', role: 'agent_gate', gate: asked });
  }
  const { endUser, apiKey } = requester;
  if (endUser) {
    for (const scope of [...scopes]) {
      if (scope.kind === 'gate' && scope.gate.endUserSpendingLimit !== null) {
        scopes.push({ kind: 'end_user', gate: scope.gate, endUser });
      }
    }
  }
  if (apiKey) scopes.push({ kind: 'key', key: apiKey });
  if (session) scopes.push({ kind: 'session', session });
  return scopes;
}

/** Money in a message: as many decimals as it has, up to the ledger's. */
const usd = (amount: number) => `$${amount.toFixed(8).replace(/\.?0+$/, '')}`;

function labelOf(scope: Extract<LimitScope, { kind: 'gate' }>): string {
  const name = `"${scope.gate.name}"`;
  if (scope.role === 'agent_gate') return `Agent gate ${name}`;
  if (scope.role === 'sub_gate' && scope.via) {
    return `Sub-gate ${name} (role "${scope.via.role}" of agent gate "${scope.via.agent.name}")`;
  }
  return `Gate ${name}`;
}

/**
 * Why a limit refused, of three: the limit itself is below this request's worst case (no amount
 * of waiting lets it pass: the figures name both), the limit is reached (spent so far and the
 * limit), or this request's worst case does not fit in what is left.
 */
export type RefusalReason = 'limit_below_request' | 'limit_reached' | 'request_exceeds_remaining';

export function refusalReason(refusal: Refusal, worstCase: number): RefusalReason {
  if (worstCase > refusal.limit) return 'limit_below_request';
  return refusal.reached ? 'limit_reached' : 'request_exceeds_remaining';
}

function refusalMessage(label: string, period: string, refusal: Refusal, worstCase: number): string {
  const resets = period === 'total' ? '' : ', or wait for the period to reset';
  switch (refusalReason(refusal, worstCase)) {
    case 'limit_below_request':
      return `${label}: its ${period} spending limit of ${usd(refusal.limit)} is below this request's worst case of ${usd(worstCase)} (its prompt and output cap at the dearest model), so it is refused however little is spent; raise the limit above ${usd(worstCase)}, or send a smaller request (a shorter prompt, a lower maxTokens)`;
    case 'limit_reached':
      return `${label} has reached its ${period} spending limit: ${usd(refusal.spent)} spent (requests under way included) of ${usd(refusal.limit)}; raise or lift the limit${resets}`;
    case 'request_exceeds_remaining':
      return `${label}: this request's worst case ${usd(worstCase)} exceeds what is left of its ${period} spending limit (${usd(refusal.remaining)} of ${usd(refusal.limit)}, ${usd(refusal.spent)} spent); send a smaller request (a shorter prompt, a lower maxTokens) or raise the limit`;
  }
}

const refusalFigures = (refusal: Refusal, worstCase: number) => ({
  reason: refusalReason(refusal, worstCase),
  limitUsd: refusal.limit,
  spentUsd: refusal.spent,
  remainingUsd: refusal.remaining,
  worstCaseUsd: worstCase,
});

/** The 402 of a gate scope that refused: its limit reached, or this request too big for what is left. */
function refusedBy(scope: Extract<LimitScope, { kind: 'gate' }>, refusal: Refusal, worstCase: number) {
  const { gate } = scope;
  const label = labelOf(scope);
  const period = gate.spendingLimitPeriod;
  return new DomainError('spending_limit_exceeded', refusalMessage(label, period, refusal, worstCase), {
    scope: scope.role,
    gateId: gate.id,
    gateName: gate.name,
    ...(scope.via && { role: scope.via.role, agentGateId: scope.via.agent.id }),
    ...refusalFigures(refusal, worstCase),
  });
}

/**
 * The 402 of a key's or an end user's limit: reached, or this request too big for what is left.
 * A key names itself (402 key_spending_limit); an end user's limit is one of its gate's.
 */
function rowRefusal(
  scope: Extract<LimitScope, { kind: 'key' | 'end_user' }>,
  refusal: Refusal,
  worstCase: number,
) {
  const label =
    scope.kind === 'key'
      ? `API key "${scope.key.name}"`
      : `End user "${scope.endUser}" of gate "${scope.gate.name}"`;
  const period = rowOf(scope).period;
  const message = refusalMessage(label, period, refusal, worstCase);
  const figures = refusalFigures(refusal, worstCase);
  return scope.kind === 'key'
    ? new DomainError('key_spending_limit', message, {
        scope: 'key',
        apiKeyId: scope.key.id,
        apiKeyName: scope.key.name,
        ...figures,
      })
    : new DomainError('spending_limit_exceeded', message, {
        scope: 'end_user',
        gateId: scope.gate.id,
        gateName: scope.gate.name,
        endUser: scope.endUser,
        ...figures,
      });
}

/** A refusal from the scope that refused, whatever its kind. */
async function refusalOf(scope: LimitScope, refusal: Refusal, amount: number, idle: boolean) {
  switch (scope.kind) {
    case 'gate':
      return refusedBy(scope, refusal, amount);
    case 'session':
      return refuseSession(scope.session, amount, idle);
    default:
      return rowRefusal(scope, refusal, amount);
  }
}

/** Replaces a hold with what it cost: a key's or an end user's in its row, a gate's in the ledger. */
const settleHold = (ledger: SpendingLedger, reservation: Reservation | RowReservation, actual: number) =>
  isRowHold(reservation) ? rowsOf(ledger).settle(reservation, actual) : ledger.settle(reservation, actual);

async function release(ledger: SpendingLedger, hold: Hold): Promise<void> {
  if (hold.reservation) await settleHold(ledger, hold.reservation, 0);
  else if (hold.scope.kind === 'session') await releaseSession(hold.scope.session, hold.amount);
}

/** A limiting scope as the shared ledger keys it: this period's counter and its limit. */
function specOf(scope: LimitScope, now: Date): ScopeSpec {
  switch (scope.kind) {
    case 'gate':
      return {
        kind: 'gate',
        gateId: scope.gate.id,
        periodStart: periodStart(scope.gate.spendingLimitPeriod as SpendingPeriod, now),
        limit: Number(scope.gate.spendingLimit),
      };
    case 'session':
      return { kind: 'session', sessionId: scope.session.id, limit: scope.session.limit ?? 0 };
    default: {
      const row = rowOf(scope);
      return { kind: 'row', row, periodStart: rowPeriodStart(row.period, now), limit: limitOf(scope) };
    }
  }
}

const NARROWNESS: Record<LimitScope['kind'], number> = { key: 0, end_user: 1, session: 2, gate: 3 };

/**
 * Reserves `amount` against every scope that limits spending, all or none. A ledger that decides
 * every scope in one step (Redis) does so; otherwise they are reserved in order and, when one
 * refuses, the holds made before it are let go before the refusal is thrown.
 */
export async function reserveAll(
  ledger: SpendingLedger,
  scopes: LimitScope[],
  amount: number,
): Promise<Hold[]> {
  if (ledger.reserveScopes) {
    const limiting = scopes.filter(limits);
    if (limiting.length === 0) return [];
    const now = new Date();
    const made = await ledger.reserveScopes(
      limiting.map((scope) => specOf(scope, now)),
      amount,
    );
    if ('refusedAt' in made) {
      throw await refusalOf(limiting[made.refusedAt] as LimitScope, made.refusal, amount, made.idle);
    }
    return limiting.map((scope) => ({ scope, amount, reservation: made }));
  }
  const made: Hold[] = [];
  try {
    // Narrowest first: a key or an end user past its limit is refused before it holds any of a
    // gate's room, which other callers share.
    for (const scope of [...scopes].sort((a, b) => NARROWNESS[a.kind] - NARROWNESS[b.kind])) {
      if (!limits(scope)) continue;
      if (scope.kind === 'session') {
        await reserveSession(scope.session, amount);
        made.push({ scope, amount, reservation: null });
        continue;
      }
      if (scope.kind !== 'gate') {
        const reserved = await rowsOf(ledger).reserve(rowOf(scope), limitOf(scope), amount);
        if ('refused' in reserved) throw rowRefusal(scope, reserved, amount);
        made.push({ scope, amount, reservation: reserved });
        continue;
      }
      const reserved = await ledger.reserve(scope.gate.id, amount);
      if (isRefusal(reserved)) throw refusedBy(scope, reserved, amount);
      made.push({ scope, amount, reservation: reserved });
    }
  } catch (error) {
    // Released one by one: a hold let go late only refuses others for a moment; none is lost.
    for (const hold of made) {
      await release(ledger, hold).catch((e) => console.error('spending: could not release a hold', e));
    }
    throw error;
  }
  return made;
}

/**
 * Charges what a request cost (its answer and any failed attempts) to every gate it passed
 * through: a reserved gate's holds are settled (the first to the cost, the others to nothing), a
 * gate without a block limit has the cost added. Sessions are settled by settleSession, which
 * records more than spending. The cost was paid: failing to record it is reported, never turned
 * into an error for the client (nor into a second settlement at zero).
 */
export async function chargeAll(
  ledger: SpendingLedger,
  scopes: LimitScope[],
  holds: Hold[],
  costUsd: number,
) {
  let spendingWarning = false;
  /** The alert_only gates this charge took over their limit, first in this period: alert once. */
  const crossings: { gate: Gate; spent: number }[] = [];
  // Each reservation settled once: the first a scope made to the cost, later ones (top-ups before
  // a fallback) to nothing. A shared ledger's reservation spans several scopes; it is still one.
  const settlements = new Map<Reservation | RowReservation, number>();
  const charged = new Set<LimitScope>();
  for (const hold of holds) {
    if (!hold.reservation) continue;
    const first = !charged.has(hold.scope);
    charged.add(hold.scope);
    if (first || !settlements.has(hold.reservation)) {
      settlements.set(hold.reservation, first ? costUsd : (settlements.get(hold.reservation) ?? 0));
    }
  }
  await Promise.all(
    [...settlements].map(([reservation, actual]) =>
      settleHold(ledger, reservation, actual).catch((error) =>
        console.error('spending: could not record', actual, 'USD', error),
      ),
    ),
  );
  await Promise.all(
    scopes.map(async (scope) => {
      if (charged.has(scope)) return;
      // A key whose limit only alerts counts what it spends; one without a limit, nothing.
      if (scope.kind === 'key' && scope.key.spendingLimit !== null) {
        await rowsOf(ledger)
          .add(rowOf(scope), costUsd)
          .catch((error) =>
            console.error('spending: could not record', costUsd, 'USD for key', scope.key.id, error),
          );
      }
      if (scope.kind !== 'gate') return;
      const { gate } = scope;
      try {
        if (costUsd > 0 || gate.spendingLimit !== null) {
          const s = await ledger.add(gate.id, costUsd, gate.spendingLimit !== null);
          spendingWarning ||= s.overLimit;
          if (s.crossed) crossings.push({ gate, spent: s.current ?? Number(gate.spendingLimit) });
        }
      } catch (error) {
        console.error('spending: could not record', costUsd, 'USD for gate', gate.id, error);
      }
    }),
  );
  return { spendingWarning, spendingCrossed: crossings.length > 0, crossings };
}
