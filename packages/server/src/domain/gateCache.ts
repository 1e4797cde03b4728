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

export async function loadGate(userId: string, id: string): Promise<Gate> {
  const hit = cache.get(id);
  if (hit && hit.gate.userId === userId && performance.now() - hit.at < TTL_MS) return hit.gate;
  const gate = await getGate(userId, id);
  if (cache.size >= MAX_ENTRIES) cache.clear();
  cache.set(id, { gate, at: performance.now() });
  return gate;
}

export function forgetGate(id: string): void {
  cache.delete(id);
}
