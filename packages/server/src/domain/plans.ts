export type Plan = {
  id: string;
  name: string;
  /** null: no limit */
  maxGates: number | null;
  logRetentionDays: number;
};

export const PLANS: Record<string, Plan> = {
  free: { id: 'free', name: 'Free', maxGates: 10, logRetentionDays: 30 },
  pro: { id: 'pro', name: 'Pro', maxGates: 100, logRetentionDays: 90 },
  enterprise: { id: 'enterprise', name: 'Enterprise', maxGates: null, logRetentionDays: 365 },
};

export function planOf(id: string): Plan {
  return PLANS[id] ?? (PLANS.free as Plan);
}
