/**
 * A gate's history (issue 14): its versions newest first with what each changed, and rollback to
 * one of them. Versions are written by gates.ts through gateVersions.ts; another user's gate or
 * version is a 404 like a missing one.
 */
import { AGENT_FIELDS, GATE_FIELDS, type GateSettings } from '@gatehouse/rules/gate';
import { isUuid } from '@gatehouse/rules/ids';
import { z } from 'zod';
import { prisma } from '../db/client.ts';
import type { Gate } from '../generated/prisma/client.ts';
import { ConflictError, NotFoundError, parseWith, ValidationError } from './errors.ts';
import { getGate } from './gateCache.ts';
import { type GateDeps, updateGate } from './gates.ts';
import type { GateChangeBy } from './gateVersions.ts';

export const gateHistoryQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().optional(),
});

/** POST /v1/gates/:id/rollback's body. */
export const rollbackBodySchema = z.strictObject({
  versionId: z.string().min(1, 'must be the id of one of the gate’s versions'),
});

export type GateChange = { from: unknown; to: unknown };

export type GateVersionEntry = {
  id: string;
  version: number;
  changedBy: GateChangeBy['kind'];
  /** Who made a user change or a rollback; null for the Architect (or an account deleted since). */
  actor: { id: string; email: string | null } | null;
  /** The version a rollback restored. */
  rolledBackTo: { id: string; version: number | null } | null;
  changedFields: string[];
  /** Each changed field's value before (the previous version's; null before the first) and after. */
  changes: Record<string, GateChange>;
  /** Every setting after this change. */
  settings: Partial<GateSettings>;
  createdAt: Date;
};

const INCLUDE = {
  actor: { select: { id: true, email: true } },
  rolledBackToVersion: { select: { id: true, version: true } },
} as const;

/** A version of the caller's gate by id; anything else, another gate's included, is a 404. */
async function versionOf(gate: Gate, versionId: string) {
  const version = isUuid(versionId)
    ? await prisma.gateVersion.findFirst({ where: { id: versionId, gateId: gate.id } })
    : null;
  if (!version) throw new NotFoundError(`Version ${versionId} of this gate`);
  return version;
}

/**
 * A page of the gate's versions, newest first (keyset on the version number); `cursor` is the
 * id of the last version of the previous page.
 */
export async function gateHistory(userId: string, gateId: string, raw: unknown) {
  const q = parseWith(gateHistoryQuerySchema, raw);
  const gate = await getGate(userId, gateId);
  let below: number | undefined;
  if (q.cursor !== undefined) {
    const at = isUuid(q.cursor)
      ? await prisma.gateVersion.findFirst({ where: { id: q.cursor, gateId: gate.id } })
      : null;
    if (!at) {
      throw new ValidationError([{ path: 'cursor', message: 'must be a cursor from a previous page' }]);
    }
    below = at.version;
  }
  // Two beyond the page: one says whether more follow, one is the last item's previous version.
  const rows = await prisma.gateVersion.findMany({
    where: { gateId: gate.id, ...(below !== undefined && { version: { lt: below } }) },
    orderBy: { version: 'desc' },
    take: q.limit + 2,
    include: INCLUDE,
  });
  const items: GateVersionEntry[] = rows.slice(0, q.limit).map((row, i) => {
    const settings = row.settings as Partial<GateSettings>;
    const previous = rows[i + 1]?.settings as Partial<GateSettings> | undefined;
    const changes = Object.fromEntries(
      row.changedFields.map((f) => [
        f,
        { from: previous?.[f as keyof GateSettings] ?? null, to: settings[f as keyof GateSettings] ?? null },
      ]),
    );
    return {
      id: row.id,
      version: row.version,
      changedBy: row.changedBy as GateChangeBy['kind'],
      actor: row.actorUserId === null ? null : { id: row.actorUserId, email: row.actor?.email ?? null },
      rolledBackTo:
        row.rolledBackTo === null
          ? null
          : { id: row.rolledBackTo, version: row.rolledBackToVersion?.version ?? null },
      changedFields: row.changedFields,
      changes,
      settings,
      createdAt: row.createdAt,
    };
  });
  const hasMore = rows.length > q.limit;
  return { items, limit: q.limit, hasMore, nextCursor: hasMore ? (items.at(-1)?.id ?? null) : null };
}

/**
 * The update that makes a gate's settings equal the snapshot: every settable field it holds,
 * except a standard gate's agent fields, which the rules refuse to be sent and which settle to
 * the values the snapshot holds.
 */
function rollbackInput(snapshot: Partial<GateSettings>): Record<string, unknown> {
  const fields = GATE_FIELDS.filter(
    (f) =>
      f in snapshot && !(snapshot.gateType === 'standard' && (AGENT_FIELDS as readonly string[]).includes(f)),
  );
  return Object.fromEntries(fields.map((f) => [f, snapshot[f]]));
}

/**
 * Restores the settings of one of the gate's versions, as a new version (changed by 'rollback'),
 * so a rollback can itself be undone. A snapshot that the rules refuse today (a model no longer
 * configured, a name another gate took since) changes nothing and says why.
 */
export async function rollbackGate(
  userId: string,
  gateId: string,
  versionId: string,
  deps: GateDeps,
): Promise<Gate> {
  const gate = await getGate(userId, gateId);
  const version = await versionOf(gate, versionId);
  const input = rollbackInput(version.settings as Partial<GateSettings>);
  try {
    return await updateGate(userId, gate.id, input, deps, { kind: 'rollback', versionId: version.id });
  } catch (error) {
    const why = `Version ${version.version} can no longer be applied`;
    if (error instanceof ValidationError) {
      throw new ValidationError(error.issues, `${why}: ${error.message.replace(/^Invalid request: /, '')}`);
    }
    if (error instanceof ConflictError) throw new ConflictError(`${why}: ${error.message}`, error.field);
    throw error;
  }
}
