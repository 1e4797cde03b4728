/**
 * Recording a gate's versions (issue 14): every change of its settings, by a user, by the
 * Architect or by a rollback, is kept with who made it, the fields it changed and the whole
 * snapshot after it. gates.ts calls recordGateVersion inside the transaction that changes the
 * gate, holding the gate row's lock, so versions of one gate are numbered 1, 2, ... without gaps
 * or duplicates however many changes run at once. Reading and rolling back: gateHistory.ts.
 */
import { GATE_FIELDS, type GateFieldName, type GateSettings } from '@gatehouse/rules/gate';
import type { Prisma } from '../generated/prisma/client.ts';

export const GATE_CHANGE_KINDS = ['user', 'architect', 'rollback'] as const;

/** Who changes a gate: its owner, the Architect's auto-apply, or a rollback to a version. */
export type GateChangeBy = { kind: 'user' } | { kind: 'architect' } | { kind: 'rollback'; versionId: string };

/** Every settable field, in GATE_FIELDS order: what a version stores and a rollback restores. */
export function snapshotOf(settings: GateSettings): GateSettings {
  return Object.fromEntries(GATE_FIELDS.map((f) => [f, settings[f]])) as GateSettings;
}

/** JSON with object keys sorted: jsonb does not keep key order, so equality must not see it. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

export function sameSetting(a: unknown, b: unknown): boolean {
  return canonical(a ?? null) === canonical(b ?? null);
}

/** The fields whose values differ between two snapshots, in GATE_FIELDS order. */
export function changedFields(
  before: Partial<Record<GateFieldName, unknown>>,
  after: Partial<Record<GateFieldName, unknown>>,
): GateFieldName[] {
  return GATE_FIELDS.filter((f) => !sameSetting(before[f], after[f]));
}

export type VersionRecord = {
  gateId: string;
  /** The gate's owner. */
  userId: string;
  by: GateChangeBy;
  /** The settings before the change; null on creation. */
  before: GateSettings | null;
  after: GateSettings;
  /** On creation: the fields the input set. */
  setFields?: readonly string[];
};

/**
 * Writes the next version of the gate when the change changed something (a rollback is always
 * kept, so the history says it happened). Call it inside the transaction that changed the gate,
 * after the gate row is locked (by SELECT ... FOR UPDATE or the UPDATE itself).
 */
export async function recordGateVersion(tx: Prisma.TransactionClient, r: VersionRecord): Promise<void> {
  const fields =
    r.before === null
      ? GATE_FIELDS.filter((f) => r.setFields?.includes(f))
      : changedFields(r.before, r.after);
  if (fields.length === 0 && r.by.kind !== 'rollback') return;
  const last = await tx.gateVersion.aggregate({ where: { gateId: r.gateId }, _max: { version: true } });
  let version = (last._max.version ?? 0) + 1;
  if (version === 1 && r.before !== null) {
    // A gate made before history was kept: its settings before this change become version 1
    // (no fields changed, no actor), so the first change can be rolled back too.
    await tx.gateVersion.create({
      data: {
        gateId: r.gateId,
        userId: r.userId,
        version: 1,
        changedBy: 'user',
        actorUserId: null,
        rolledBackTo: null,
        changedFields: [],
        settings: snapshotOf(r.before) as Prisma.InputJsonObject,
      },
    });
    version = 2;
  }
  await tx.gateVersion.create({
    data: {
      gateId: r.gateId,
      userId: r.userId,
      version,
      changedBy: r.by.kind,
      actorUserId: r.by.kind === 'architect' ? null : r.userId,
      rolledBackTo: r.by.kind === 'rollback' ? r.by.versionId : null,
      changedFields: fields,
      settings: snapshotOf(r.after) as Prisma.InputJsonObject,
    },
  });
}
