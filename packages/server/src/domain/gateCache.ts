/**
 * Reading one gate: straight from the database (getGate), or on the hot path from a short-lived
 * cache (loadGate, hotCache.ts). A gate's change, published by whichever process made it
 * (db/changes.ts), drops the entry in every process; TTL_MS bounds what a lost notification
 * leaves. Spending is never read from here: the spending statements read and write the row itself.
 */
import { isUuid } from '@gatehouse/rules/ids';
import { onChange } from '../db/changes.ts';
import { prisma } from '../db/client.ts';
import type { Gate } from '../generated/prisma/client.ts';
import { NotFoundError } from './errors.ts';
import { hotCache } from './hotCache.ts';

/** The owner's gate, read from the database; anyone else's (or no) gate is a 404. */
export async function getGate(userId: string, id: string): Promise<Gate> {
  const gate = isUuid(id) ? await prisma.gate.findFirst({ where: { id, userId } }) : null;
  if (!gate) throw new NotFoundError('Gate');
  return gate;
}

const TTL_MS = 2000;
// By owner and gate: a read for someone else's gate id (a 404) is never shared with the owner's.
const cache = hotCache<Gate>({ ttlMs: TTL_MS, maxEntries: 10_000 });

export function loadGate(userId: string, id: string): Gate | Promise<Gate> {
  return cache.get(`${userId}:${id}`, () => getGate(userId, id));
}

// Names to ids, by owner: a gate named in a model field (`gatehouse/<name>`) on every request.
const ids = hotCache<string>({ ttlMs: TTL_MS, maxEntries: 10_000 });

// Dropped after the write: a read that ran before it cannot put the old gate back.
onChange((heard) => {
  if (heard.kind === 'everything') {
    cache.clear();
    ids.clear();
  } else if (heard.kind === 'gate') {
    cache.forget(`${heard.userId}:${heard.gateId}`);
    // Renamed or deleted: its old name must not lead to it any longer.
    ids.forgetWhere((id) => id === heard.gateId);
  }
});

/** The owner's gate of this name (names are unique per account); anyone else's is a 404. */
export async function loadGateByName(userId: string, name: string): Promise<Gate> {
  const id = await ids.get(`${userId}:${name}`, async () => {
    const row = await prisma.gate.findFirst({ where: { userId, name }, select: { id: true } });
    if (!row) throw new NotFoundError('Gate');
    return row.id;
  });
  return loadGate(userId, id);
}
