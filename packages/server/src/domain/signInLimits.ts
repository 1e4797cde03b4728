/**
 * Limits on failed sign-ins, shared by REST and GraphQL: per client address, per account from one
 * address, and per account over all addresses; and on sign-ups per client address (at the end). Counters live in this process's memory for now (a
 * later step moves them to Redis).
 *
 * Why these rules:
 * - Every attempt is counted before its password is checked, so concurrent guesses cannot pass
 *   the limit together; a right password gives its point back.
 * - An account is limited per address it is tried from, so an attacker failing on purpose from one
 *   address (or one IPv6 /64) closes the account to that address only, never to its owner
 *   elsewhere. Its limit over all addresses is many times higher (accountWideFailures): only an
 *   attacker with many addresses reaches it, and for at most the rest of the window.
 * - The address limit stops one address trying many accounts (password spraying) without a
 *   household behind one address noticing.
 * - The address is counted first, and a refused address touches no account counter: it can
 *   neither lock an account out nor make the process keep a counter per email it sends. An
 *   attempt one counter refuses is not counted against the others.
 * - Windows are short (15 minutes by default) and a success resets the account's count from that
 *   address; API keys and live sessions are never affected.
 */
import { isIPv6 } from 'node:net';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { ConflictError, ForbiddenError, RateLimitedError, UnauthorizedError } from './errors.ts';

export type SignInLimits = {
  /** Failed sign-ins one account may have from one address per window. */
  accountFailures: number;
  /** Failed sign-ins one client address may have per window, over any accounts. */
  addressFailures: number;
  /** Failed sign-ins one account may have per window over all addresses. */
  accountWideFailures: number;
  windowSeconds: number;
};

type Counters = { byAddress: RateLimiterMemory; byPair: RateLimiterMemory; byAccount: RateLimiterMemory };

// One set of counters per configuration: REST and GraphQL share the app's config, so they
// share its counters, and an app built with other limits (a test's) has its own.
const countersOf = new WeakMap<object, Map<string, RateLimiterMemory>>();

/** The configuration's counter named `keyPrefix`, made on first use. */
function counter(limits: object, keyPrefix: string, points: number, windowSeconds: number) {
  let named = countersOf.get(limits);
  if (!named) {
    named = new Map();
    countersOf.set(limits, named);
  }
  let found = named.get(keyPrefix);
  if (!found) {
    found = new RateLimiterMemory({ keyPrefix, points, duration: windowSeconds });
    named.set(keyPrefix, found);
  }
  return found;
}

function counters(limits: SignInLimits): Counters {
  const { windowSeconds } = limits;
  return {
    byAddress: counter(limits, 'signin-address', limits.addressFailures, windowSeconds),
    byPair: counter(limits, 'signin-account-address', limits.accountFailures, windowSeconds),
    byAccount: counter(limits, 'signin-account', limits.accountWideFailures, windowSeconds),
  };
}

type Who = { email: string; address: string };

/** The keys one attempt is counted under; an address key has no "|", so a pair key is unambiguous. */
function keysOf(who: Who) {
  const address = addressKey(who.address);
  return { address, pair: `${address}|${who.email}`, account: who.email };
}

/**
 * The key an address is counted under. An IPv6 client is usually given a whole /64 and can
 * take any address in it, so the /64 counts as one; an IPv4-mapped address as its IPv4 one.
 */
export function addressKey(address: string): string {
  const bare = address.replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return mapped[1] as string;
  if (!isIPv6(bare)) return address;
  const [head = '', tail = ''] = bare.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])) : [];
  const groups = bare.includes('::')
    ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/** Takes a point from the key's counter, or answers the refusal when it has none left. */
async function take(
  counter: RateLimiterMemory,
  key: string,
  what: string,
  attempts = 'failed sign-ins',
): Promise<RateLimitedError | null> {
  try {
    await counter.consume(key);
    return null;
  } catch (error) {
    if (!(error instanceof RateLimiterRes)) throw error;
    const seconds = Math.max(1, Math.ceil(error.msBeforeNext / 1000));
    const wait = seconds < 120 ? `${seconds} seconds` : `${Math.ceil(seconds / 60)} minutes`;
    return new RateLimitedError(`Too many ${attempts} ${what}; try again in ${wait}`, seconds);
  }
}

/**
 * Runs one sign-in attempt within the limits: a RateLimitedError instead when a counter is spent;
 * `attempt` throws an UnauthorizedError for a wrong email or password, which stays counted.
 */
export async function withinSignInLimits<T>(
  limits: SignInLimits,
  who: Who,
  attempt: () => Promise<T>,
): Promise<T> {
  const { byAddress, byPair, byAccount } = counters(limits);
  const keys = keysOf(who);
  const fromAddress = await take(byAddress, keys.address, 'from your address');
  if (fromAddress) throw fromAddress;
  const [forPair, forAccount] = await Promise.all([
    take(byPair, keys.pair, 'for this account from your address'),
    take(byAccount, keys.account, 'for this account'),
  ]);
  if (forPair || forAccount) {
    await Promise.all([
      byAddress.reward(keys.address),
      forPair ? null : byPair.reward(keys.pair),
      forAccount ? null : byAccount.reward(keys.account),
    ]);
    throw forPair ?? forAccount;
  }
  try {
    const result = await attempt();
    await Promise.all([
      byPair.delete(keys.pair),
      byAccount.reward(keys.account),
      byAddress.reward(keys.address),
    ]);
    return result;
  } catch (error) {
    // Only a wrong password is a failure; an outage must not lock anyone out.
    if (!(error instanceof UnauthorizedError)) {
      await Promise.all([
        byAddress.reward(keys.address),
        byPair.reward(keys.pair),
        byAccount.reward(keys.account),
      ]);
    }
    throw error;
  }
}

/**
 * The failures counted now against an address, an account from it, and the account over all
 * addresses; null where no counter is kept at all (tests read how much memory attempts leave).
 */
export async function signInCounts(limits: SignInLimits, who: Who) {
  const { byAddress, byPair, byAccount } = counters(limits);
  const keys = keysOf(who);
  const [address, pair, account] = await Promise.all([
    byAddress.get(keys.address),
    byPair.get(keys.pair),
    byAccount.get(keys.account),
  ]);
  return {
    address: address?.consumedPoints ?? null,
    pair: pair?.consumedPoints ?? null,
    account: account?.consumedPoints ?? null,
  };
}

export type SignUpLimits = { addressAttempts: number; windowSeconds: number };

/**
 * Runs one sign-up within its address's limit. An account made counts, and so do an email taken
 * already (else one address could test emails by the thousand) and a sign-up refused as closed
 * (each hashed a password first, and the limit keeps one address from spending the server's CPU
 * on that); anything else gives its point back: invalid input costs nothing and tells nothing,
 * and an outage must not lock anyone out.
 */
export async function withinSignUpLimits<T>(
  limits: SignUpLimits,
  address: string,
  attempt: () => Promise<T>,
): Promise<T> {
  const byAddress = counter(limits, 'signup-address', limits.addressAttempts, limits.windowSeconds);
  const key = addressKey(address);
  const refused = await take(byAddress, key, 'from your address', 'sign-ups');
  if (refused) throw refused;
  try {
    return await attempt();
  } catch (error) {
    if (!(error instanceof ConflictError || error instanceof ForbiddenError)) await byAddress.reward(key);
    throw error;
  }
}
