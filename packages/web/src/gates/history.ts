/** How the History tab words a version: who made it, and a setting's value. */

/** Text longer than this is cut in the list, with Show all. */
export const TEXT_PREVIEW = 80;

type Who = {
  version: number;
  changedBy: string;
  actorEmail: string | null;
  rolledBackToVersion: number | null;
  changes: readonly unknown[];
};

/** "by you", "by the Architect", "rollback to v3". Only a gate's owner changes it. */
export function changeWho(v: Who): string {
  // A gate made before history was kept gets its settings of then as v1 at its first change:
  // nobody made that version (a gate's own first version sets its name and model).
  if (v.version === 1 && v.changedBy === 'USER' && v.changes.length === 0) {
    return 'as the gate was before its history was kept';
  }
  const by = v.actorEmail === null ? 'by an account deleted since' : 'by you';
  if (v.changedBy === 'ARCHITECT') return 'by the Architect';
  if (v.changedBy === 'ROLLBACK') {
    const to = v.rolledBackToVersion === null ? 'a version' : `v${v.rolledBackToVersion}`;
    return `rollback to ${to} ${by}`;
  }
  return by;
}

/** A setting's value as a person reads it: none, yes/no, lists joined, JSON for the rest. */
export function readableValue(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string') return value === '' ? '""' : value;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return 'none';
    if (value.every((item) => typeof item === 'string')) return value.join(', ');
  }
  return JSON.stringify(value);
}
