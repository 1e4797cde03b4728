import {
  type ApiKeyCreate,
  type ApiKeyUpdate,
  apiKeyCreateSchema,
  apiKeyRollSchema,
  apiKeyUpdateSchema,
  type KeySpendingPeriod,
} from '@gatehouse/rules/account';
import { isUuid } from '@gatehouse/rules/ids';
import { onChange, publish } from '../db/changes.ts';
import { prisma } from '../db/client.ts';
import type { ApiKey, User } from '../generated/prisma/client.ts';
import {
  AccountDisabledError,
  ConflictError,
  KeyExpiredError,
  NotFoundError,
  parseWith,
  ValidationError,
} from './errors.ts';
import { hotCache } from './hotCache.ts';
import { randomToken, sha256 } from './secrets.ts';
import {
  effectiveSpending,
  type SpendingCounters,
  type SpendingEnforcement,
  spendingStatusFor,
} from './spending.ts';

/** Every key starts so: easy to spot in code and for secret scanners. */
export const API_KEY_PREFIX = 'gh_';
const KEY_PATTERN = /^gh_[A-Za-z0-9_-]{43}$/;
const VISIBLE_PREFIX_LENGTH = 11;
/** last_used_at is written at most this often per key, not on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;
/** When this process last wrote each key's last_used_at. */
const lastUsedWritten = new Map<string, number>();

export type IssuedApiKey = { apiKey: ApiKey; key: string };

const newSecret = () => {
  const key = `${API_KEY_PREFIX}${randomToken(32)}`;
  return { key, prefix: key.slice(0, VISIBLE_PREFIX_LENGTH), keyHash: sha256(key) };
};

/**
 * A key's scope may name only the account's own gates: a gate of another account, or none, is
 * a 400 naming it (and says no more about whether it exists).
 */
async function checkAllowedGates(userId: string, allowedGates: string[] | undefined): Promise<void> {
  if (!allowedGates || allowedGates.length === 0) return;
  const own = await prisma.gate.findMany({
    where: { userId, id: { in: allowedGates } },
    select: { id: true },
  });
  const found = new Set(own.map((g) => g.id));
  const issues = allowedGates.flatMap((id, index) =>
    found.has(id) ? [] : [{ path: `allowedGates.${index}`, message: `no gate of yours has id ${id}` }],
  );
  if (issues.length > 0) throw new ValidationError(issues);
}

/** The columns a key's settings are stored in (only those given). */
function columnsOf(settings: ApiKeyCreate | ApiKeyUpdate) {
  const { metadata, allowedGates, ...rest } = settings;
  return {
    ...rest,
    // The ids as stored (lower case), so the scope check compares like with like.
    ...(allowedGates && { allowedGates: allowedGates.map((id) => id.toLowerCase()) }),
    ...(metadata && { metadata: metadata as Record<string, string | number | boolean | null> }),
  };
}

export async function createApiKey(userId: string, raw: unknown): Promise<IssuedApiKey> {
  const settings = parseWith(apiKeyCreateSchema, raw);
  await checkAllowedGates(userId, settings.allowedGates);
  const { key, prefix, keyHash } = newSecret();
  const apiKey = await prisma.apiKey.create({
    data: { userId, ...columnsOf(settings), name: settings.name, prefix, keyHash },
  });
  await publish({ kind: 'apiKey', userId, keyId: apiKey.id });
  return { apiKey, key };
}

export function listApiKeys(userId: string): Promise<ApiKey[]> {
  return prisma.apiKey.findMany({ where: { userId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
}

/** Changes a key's settings; the next request with it, in any process, is held to them. */
export async function updateApiKey(userId: string, id: string, raw: unknown): Promise<ApiKey> {
  const key = isUuid(id) ? await prisma.apiKey.findFirst({ where: { id, userId } }) : null;
  if (!key) throw new NotFoundError('API key');
  const changes = parseWith(apiKeyUpdateSchema, raw);
  await checkAllowedGates(userId, changes.allowedGates);
  const updated = await prisma.apiKey.update({ where: { id }, data: columnsOf(changes) });
  await publish({ kind: 'apiKey', userId, keyId: key.id });
  return updated;
}

/**
 * A new secret for the same key (id, settings, spending), returned this once. The secret it
 * replaces keeps working for `graceSeconds` (0: not at all), so a client can change over; a
 * secret replaced by an earlier roll stops at once.
 */
export async function rollApiKey(userId: string, id: string, raw: unknown): Promise<IssuedApiKey> {
  const key = isUuid(id) ? await prisma.apiKey.findFirst({ where: { id, userId } }) : null;
  if (!key) throw new NotFoundError('API key');
  if (key.revokedAt) throw new ConflictError('A revoked API key cannot be rolled; create a new one');
  const { graceSeconds } = parseWith(apiKeyRollSchema, raw);
  const { key: secret, prefix, keyHash } = newSecret();
  const apiKey = await prisma.apiKey.update({
    where: { id },
    data: {
      prefix,
      keyHash,
      previousKeyHash: graceSeconds > 0 ? key.keyHash : null,
      previousKeyExpiresAt: graceSeconds > 0 ? new Date(Date.now() + graceSeconds * 1000) : null,
    },
  });
  // Every process drops the key it cached under the old secret, and reads the grace from the row.
  await publish({ kind: 'apiKey', userId, keyId: key.id });
  return { apiKey, key: secret };
}

/**
 * A key as it stands at `now`: its settings typed, its spending this period (the ledger's where it
 * holds the key's counter, else the row's; lazily reset).
 */
export function apiKeyState(key: ApiKey, spending?: SpendingCounters, now = new Date()) {
  const spendingLimit = key.spendingLimit === null ? null : Number(key.spendingLimit);
  const spendingLimitPeriod = key.spendingLimitPeriod as KeySpendingPeriod;
  const spendingEnforcement = key.spendingEnforcement as SpendingEnforcement;
  const held = spending?.heldKey?.(key.id);
  const current = effectiveSpending(
    {
      spendingLimitPeriod,
      ...(held
        ? { spendingPeriodStart: held.periodStart, spendingCurrent: held.current }
        : { spendingPeriodStart: key.spendingPeriodStart, spendingCurrent: Number(key.spendingCurrent) }),
    },
    now,
  );
  return {
    spendingLimit,
    spendingLimitPeriod,
    spendingEnforcement,
    spendingCurrent: current.current,
    spendingResetsAt: current.resetsAt,
    spendingStatus: spendingStatusFor({
      spendingLimit,
      spendingEnforcement,
      spendingCurrent: current.current,
    }),
    metadata: key.metadata as Record<string, string | number | boolean | null>,
    previousKeyExpiresAt:
      key.previousKeyExpiresAt && key.previousKeyExpiresAt > now ? key.previousKeyExpiresAt : null,
  };
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
/** The key whose secret, or whose secret before its last roll, has this hash. */
const lookUpKey = (hash: string) => () =>
  prisma.apiKey.findFirst({
    where: { OR: [{ keyHash: hash }, { previousKeyHash: hash }] },
    include: { user: true },
  });

/** Whether `hash` opens `found` at `now`: its secret, or the one a roll replaced, in its grace. */
function opens(found: ApiKey, hash: string, now: number): boolean {
  if (found.keyHash === hash) return true;
  return (
    found.previousKeyHash === hash &&
    found.previousKeyExpiresAt !== null &&
    found.previousKeyExpiresAt.getTime() > now
  );
}

/**
 * The key's owner, or null for an unknown or revoked key (or a secret rolled past its grace); a
 * KeyExpiredError for a key past its expiry, an AccountDisabledError for a key of a disabled
 * account.
 */
export async function authenticateApiKey(key: string): Promise<{ user: User; apiKey: ApiKey } | null> {
  if (!looksLikeApiKey(key)) return null;
  const hash = sha256(key);
  const found = await keyCache.get(hash, lookUpKey(hash));
  const now = Date.now();
  if (!found || found.revokedAt || !opens(found, hash, now)) return null;
  if (found.user.disabledAt) throw new AccountDisabledError();
  if (found.expiresAt && found.expiresAt.getTime() <= now) throw new KeyExpiredError(found.expiresAt);
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
