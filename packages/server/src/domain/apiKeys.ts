import { prisma } from '../db/client.ts';
import type { ApiKey, User } from '../generated/prisma/client.ts';
import { apiKeyCreateSchema } from '../rules/account.ts';
import { isUuid } from '../rules/ids.ts';
import { NotFoundError, parseWith } from './errors.ts';
import { randomToken, sha256 } from './secrets.ts';

/** Every key starts so: easy to spot in code and for secret scanners. */
export const API_KEY_PREFIX = 'gh_';
const KEY_PATTERN = /^gh_[A-Za-z0-9_-]{43}$/;
const VISIBLE_PREFIX_LENGTH = 11;
/** last_used_at is written at most this often per key, not on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;
/** When this process last wrote each key's last_used_at. */
const lastUsedWritten = new Map<string, number>();

export type IssuedApiKey = { apiKey: ApiKey; key: string };

export async function createApiKey(userId: string, raw: unknown): Promise<IssuedApiKey> {
  const { name } = parseWith(apiKeyCreateSchema, raw);
  const key = `${API_KEY_PREFIX}${randomToken(32)}`;
  const apiKey = await prisma.apiKey.create({
    data: {
      userId,
      name,
      prefix: key.slice(0, VISIBLE_PREFIX_LENGTH),
      keyHash: sha256(key),
    },
  });
  return { apiKey, key };
}

export function listApiKeys(userId: string): Promise<ApiKey[]> {
  return prisma.apiKey.findMany({ where: { userId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
}

/** Revokes at once: the next request with the key is refused. Revoking twice is harmless. */
export async function revokeApiKey(userId: string, id: string): Promise<ApiKey> {
  const key = isUuid(id) ? await prisma.apiKey.findFirst({ where: { id, userId } }) : null;
  if (!key) throw new NotFoundError('API key');
  const revoked = key.revokedAt
    ? key
    : await prisma.apiKey.update({ where: { id }, data: { revokedAt: new Date() } });
  // After the write: a lookup that ran before it (and would cache the key as valid) is dropped.
  keyCache.delete(key.keyHash);
  keyLookups.delete(key.keyHash);
  return revoked;
}

export function looksLikeApiKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

// Recently authenticated keys, so the hot path skips a query per request. Revoking through this
// process drops the entry at once; another process's revocation is seen within KEY_CACHE_TTL_MS.
const KEY_CACHE_TTL_MS = 5000;
const keyCache = new Map<string, { found: ApiKey & { user: User }; at: number }>();

/** Lookups in flight by hash: the requests that find a key's entry expired together share one. */
const keyLookups = new Map<string, Promise<(ApiKey & { user: User }) | null>>();

function lookUpKey(hash: string): Promise<(ApiKey & { user: User }) | null> {
  const pending = keyLookups.get(hash);
  if (pending) return pending;
  const lookup = prisma.apiKey
    .findUnique({ where: { keyHash: hash }, include: { user: true } })
    .then((found) => {
      // Kept only if the key was not revoked meanwhile (revokeApiKey drops the lookup).
      if (found && !found.revokedAt && keyLookups.get(hash) === lookup) {
        if (keyCache.size >= 10_000) keyCache.clear();
        keyCache.set(hash, { found, at: performance.now() });
      }
      return found;
    })
    .finally(() => {
      if (keyLookups.get(hash) === lookup) keyLookups.delete(hash);
    });
  keyLookups.set(hash, lookup);
  return lookup;
}

/** The key's owner, or null for an unknown or revoked key. */
export async function authenticateApiKey(key: string): Promise<{ user: User; apiKey: ApiKey } | null> {
  if (!looksLikeApiKey(key)) return null;
  const hash = sha256(key);
  const hit = keyCache.get(hash);
  const found = hit && performance.now() - hit.at < KEY_CACHE_TTL_MS ? hit.found : await lookUpKey(hash);
  if (!found || found.revokedAt) return null;
  const now = Date.now();
  const written = Math.max(found.lastUsedAt?.getTime() ?? 0, lastUsedWritten.get(found.id) ?? 0);
  if (now - written > LAST_USED_RESOLUTION_MS) {
    // Noted before the write, so the requests arriving while it runs do not write it again.
    lastUsedWritten.set(found.id, now);
    // Off the request path: a slow write must not slow the call it records.
    prisma.apiKey.update({ where: { id: found.id }, data: { lastUsedAt: new Date(now) } }).catch(() => {});
  }
  const { user, ...apiKey } = found;
  return { user, apiKey };
}
