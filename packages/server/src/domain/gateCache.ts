/**
 * Gates read on the hot path, kept for a short time. Changes made through this process drop the
 * entry at once; another process's changes are seen within TTL_MS. Spending is never read from
 * here: the spending statements read and write the row itself.
 */
import type { Gate } from '../generated/prisma/client.ts';
import { getGate } from './gates.ts';

const TTL_MS = 2000;
const MAX_ENTRIES = 10_000;
const cache = new Map<string, { gate: Gate; at: number }>();
/**
 * Reads in flight, so the requests that find an entry expired together share one query instead
 * of sending one each (at a thousand requests a second, that was dozens every TTL_MS).
 */
const loading = new Map<string, { userId: string; gate: Promise<Gate> }>();

export async function loadGate(userId: string, id: string): Promise<Gate> {
  const hit = cache.get(id);
  if (hit && hit.gate.userId === userId && performance.now() - hit.at < TTL_MS) return hit.gate;
  const pending = loading.get(id);
  if (pending && pending.userId === userId) return pending.gate;
  const read = getGate(userId, id);
  const entry = { userId, gate: read };
  loading.set(id, entry);
  try {
    const gate = await read;
    // Kept only if no change was made meanwhile: forgetGate drops the read it overtook.
    if (loading.get(id) === entry) {
      if (cache.size >= MAX_ENTRIES) cache.clear();
      cache.set(id, { gate, at: performance.now() });
    }
    return gate;
  } finally {
    if (loading.get(id) === entry) loading.delete(id);
  }
}

export function forgetGate(id: string): void {
  cache.delete(id);
  loading.delete(id);
}
