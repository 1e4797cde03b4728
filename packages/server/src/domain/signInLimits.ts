/**
 * Limits on failed sign-ins, per account (email) and per client address, shared by REST and
 * GraphQL. Counters live in this process's memory for now (a later step moves them to Redis).
 *
 * Why these rules:
 * - Every attempt is counted before its password is checked, so concurrent guesses cannot pass
 *   the limit together; a right password gives its point back.
 * - An account's window is short (15 minutes by default) and a success resets it, so an attacker
 *   who fails on purpose closes its sign-in for at most the rest of the window, and never its API
 *   keys or live sessions. The address limit is larger: it stops one address trying many
 *   accounts (password spraying) without a household behind one address noticing.
 * - An attempt a counter refuses is not counted against the other one: a refused address cannot
 *   lock an account out by hammering it, and the account's refusals cost its owner nothing.
 */
import { isIPv6 } from 'node:net';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { DomainError, UnauthorizedError } from './errors.ts';

export type SignInLimits = {
  /** Failed sign-ins one account may have per window, from any address. */
  accountFailures: number;
  /** Failed sign-ins one client address may have per window, over any accounts. */
  addressFailures: number;
  windowSeconds: number;
};

export class RateLimitedError extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('rate_limited', message, { retryAfterSeconds });
  }
}

type Counters = { byAccount: RateLimiterMemory; byAddress: RateLimiterMemory };

// One set of counters per configuration: REST and GraphQL share the app's config, so they
// share its counters, and an app built with other limits (a test's) has its own.
const countersOf = new WeakMap<SignInLimits, Counters>();

function counters(limits: SignInLimits): Counters {
  let found = countersOf.get(limits);
  if (!found) {
    const duration = limits.windowSeconds;
    found = {
      byAccount: new RateLimiterMemory({
        keyPrefix: 'signin-account',
        points: limits.accountFailures,
        duration,
      }),
      byAddress: new RateLimiterMemory({
        keyPrefix: 'signin-address',
        points: limits.addressFailures,
        duration,
      }),
    };
    countersOf.set(limits, found);
  }
  return found;
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

function refusal(outcome: PromiseSettledResult<RateLimiterRes>, what: string): RateLimitedError | null {
  if (outcome.status === 'fulfilled') return null;
  if (!(outcome.reason instanceof RateLimiterRes)) throw outcome.reason;
  const seconds = Math.max(1, Math.ceil(outcome.reason.msBeforeNext / 1000));
  const wait = seconds < 120 ? `${seconds} seconds` : `${Math.ceil(seconds / 60)} minutes`;
  return new RateLimitedError(`Too many failed sign-ins ${what}; try again in ${wait}`, seconds);
}

/**
 * Runs one sign-in attempt within the limits: a RateLimitedError instead when either counter is
 * spent; `attempt` throws an UnauthorizedError for a wrong email or password, which stays counted.
 */
export async function withinSignInLimits<T>(
  limits: SignInLimits,
  who: { email: string; address: string },
  attempt: () => Promise<T>,
): Promise<T> {
  const { byAccount, byAddress } = counters(limits);
  const place = addressKey(who.address);
  const [account, address] = await Promise.allSettled([
    byAccount.consume(who.email),
    byAddress.consume(place),
  ]);
  const refused = refusal(account, 'for this account') ?? refusal(address, 'from your address');
  if (refused) {
    if (account.status === 'fulfilled') await byAccount.reward(who.email);
    if (address.status === 'fulfilled') await byAddress.reward(place);
    throw refused;
  }
  try {
    const result = await attempt();
    await Promise.all([byAccount.delete(who.email), byAddress.reward(place)]);
    return result;
  } catch (error) {
    // Only a wrong password is a failure; an outage must not lock anyone out.
    if (!(error instanceof UnauthorizedError)) {
      await Promise.all([byAccount.reward(who.email), byAddress.reward(place)]);
    }
    throw error;
  }
}
