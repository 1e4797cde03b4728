import { PLAN_IDS, type PlanId } from '@gatehouse/rules/account';

export type Plan = {
  id: PlanId;
  name: string;
  /** null: no limit */
  maxGates: number | null;
  logRetentionDays: number;
};

export const PLANS: Record<PlanId, Plan> = {
  free: { id: 'free', name: 'Free', maxGates: 10, logRetentionDays: 30 },
  pro: { id: 'pro', name: 'Pro', maxGates: 100, logRetentionDays: 90 },
  enterprise: { id: 'enterprise', name: 'Enterprise', maxGates: null, logRetentionDays: 365 },
};

/** The plan of the instance's admin (the first account). */
export const ADMIN_PLAN: PlanId = 'enterprise';

const isPlanId = (id: string): id is PlanId => (PLAN_IDS as readonly string[]).includes(id);

export function planOf(id: string): Plan {
  return isPlanId(id) ? PLANS[id] : PLANS.free;
}
