import { apiKeyCreateSchema, apiKeyUpdateSchema } from '@gatehouse/rules/account';
import { isUuid } from '@gatehouse/rules/ids';
import { onChange, publish } from '../db/changes.ts';
import { prisma } from '../db/client.ts';
import type { ApiKey, User } from '../generated/prisma/client.ts';
import { AccountDisabledError, NotFoundError, parseWith } from './errors.ts';
import { hotCache } from './hotCache.ts';
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
  const { name, rateLimitRpm, rateLimitTpm } = parseWith(apiKeyCreateSchema, raw);
  const key = `${API_KEY_PREFIX}${randomToken(32)}`;
  const apiKey = await prisma.apiKey.create({
    data: {
      userId,
      name,
      rateLimitRpm: rateLimitRpm ?? null,
      rateLimitTpm: rateLimitTpm ?? null,
      prefix: key.slice(0, VISIBLE_PREFIX_LENGTH),
      keyHash: sha256(key),
    },
  });
  await publish({ kind: 'apiKey', userId, keyId: apiKey.id });
  return { apiKey, key };
}

export function listApiKeys(userId: string): Promise<ApiKey[]> {
  return prisma.apiKey.findMany({ where: { userId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
}

/** Changes a key's name or limits; the next request with it is held to them. */
export async function updateApiKey(userId: string, id: string, raw: unknown): Promise<ApiKey> {
  const key = isUuid(id) ? await prisma.apiKey.findFirst({ where: { id, userId } }) : null;
  if (!key) throw new NotFoundError('API key');
  const changes = parseWith(apiKeyUpdateSchema, raw);
  const updated = await prisma.apiKey.update({ where: { id }, data: changes });
  keyCache.forget(key.keyHash);
  return updated;
}

/** Revokes at once: the next request with the key is refused. Revoking twice is harmless. */
export async function revokeApiKey(userId: string, id: string): Promise<ApiKey> {
  const key = isUuid(id) ? await prisma.apiKey.findFirst({ where: { id, userId } }) : null;
  if (!key) throw new NotFoundError('API key');
  const revoked = key.revokedAt
    ? key
    : await prisma.apiKey.update({ where: { id }, data: { revokedAt: new Date() } });
  // After the write: a lookup that ran before it (and would cache the key as valid) is dropped.
  await publish({ kind: 'apiKey', userId, keyId: key.id });
  return revoked;
}

export function looksLikeApiKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

// Recently authenticated keys with their owners (hotCache.ts), so the hot path skips a query per
// request. Revoking a key, or changing its owner's account, drops the entry in every process once
// the change is published (db/changes.ts); KEY_CACHE_TTL_MS bounds what a lost notification
// leaves. Unknown and revoked keys, and a disabled account's keys, are not kept.
const KEY_CACHE_TTL_MS = 5000;
type FoundKey = (ApiKey & { user: User }) | null;
const keyCache = hotCache<FoundKey>({
  ttlMs: KEY_CACHE_TTL_MS,
  maxEntries: 10_000,
  keep: (found) => found !== null && !found.revokedAt && !found.user.disabledAt,
});

onChange((heard) => {
  if (heard.kind === 'everything') keyCache.clear();
  else if (heard.kind === 'apiKey') keyCache.forgetWhere((found) => found?.id === heard.keyId);
  // The account's plan or state: the next request with any of its keys reads it as it is now.
  else if (heard.kind === 'account') keyCache.forgetWhere((found) => found?.userId === heard.userId);
});
const lookUpKey = (hash: string) => () =>
  prisma.apiKey.findUnique({ where: { keyHash: hash }, include: { user: true } });

/**
 * The key's owner, or null for an unknown or revoked key; an AccountDisabledError for a key of a
 * disabled account.
 */
export async function authenticateApiKey(key: string): Promise<{ user: User; apiKey: ApiKey } | null> {
  if (!looksLikeApiKey(key)) return null;
  const hash = sha256(key);
  const found = await keyCache.get(hash, lookUpKey(hash));
  if (!found || found.revokedAt) return null;
  if (found.user.disabledAt) throw new AccountDisabledError();
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
