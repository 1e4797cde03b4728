import type { GateState } from '../domain/gates.ts';
import { planOf } from '../domain/plans.ts';
import type { ApiKey, User } from '../generated/prisma/client.ts';

export function userView(user: User) {
  return {
    id: user.id,
    email: user.email,
    plan: planOf(user.plan).id,
    createdAt: user.createdAt.toISOString(),
  };
}

export function apiKeyView(key: ApiKey) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
  };
}

/** A gate as REST answers it: the domain's state, its times as ISO strings. */
export function gateView(gate: GateState) {
  return {
    ...gate,
    spendingPeriodStart: gate.spendingPeriodStart.toISOString(),
    spendingResetsAt: gate.spendingResetsAt.toISOString(),
    createdAt: gate.createdAt.toISOString(),
    updatedAt: gate.updatedAt.toISOString(),
  };
}
