/**
 * Gates read on the hot path, kept for a short time (hotCache.ts). Changes made through this
 * process drop the entry at once; another process's changes are seen within TTL_MS. Spending is
 * never read from here: the spending statements read and write the row itself.
 */
import type { Gate } from '../generated/prisma/client.ts';
import { getGate } from './gates.ts';
import { hotCache } from './hotCache.ts';

const TTL_MS = 2000;
// By owner and gate: a read for someone else's gate id (a 404) is never shared with the owner's.
const cache = hotCache<Gate>({ ttlMs: TTL_MS, maxEntries: 10_000 });

export function loadGate(userId: string, id: string): Gate | Promise<Gate> {
  return cache.get(`${userId}:${id}`, () => getGate(userId, id));
}

/** Call after the write: a read that ran before it cannot put the old gate back. */
export function forgetGate(gate: Pick<Gate, 'userId' | 'id'>): void {
  cache.forget(`${gate.userId}:${gate.id}`);
}
