/**
 * Rate limits: requests and tokens per minute, for each gate a request passes through and for the
 * API key it came with, all of them at once. A request is admitted only if it fits in every
 * window, and is then counted in all of them (all or none): one request, one prompt's tokens at
 * admission; the answer's completion tokens (and the prompt's actual count) after it.
 *
 * Each window is a sliding minute kept as 60 one-second buckets. With REDIS_URL the windows live
 * in Redis, shared by every process, and one Lua script checks and counts them atomically (their
 * keys share the deployment's hash tag, `{GATEHOUSE_REDIS_PREFIX}`, so one slot); without it, in this process's memory. While Redis
 * cannot be reached, each process holds the limits in its own memory (so N processes admit up to
 * N times a limit): a rate limit protects a provider's capacity, and an outage of the shared
 * counter should not become an outage of the gateway (budgets, which are money, fail closed).
 *
 * Knows nothing of HTTP: a refusal is a RateLimitedError naming the limit and when to come back.
 */
import type { Redis } from 'ioredis';
import { redis } from '../db/redis.ts';
import { RateLimitedError } from '../domain/errors.ts';
import type { ApiKey } from '../generated/prisma/client.ts';
import type { LimitScope } from './limits.ts';

/** The window's length, in seconds (one bucket a second). */
export const WINDOW_SECONDS = 60;

export type RateUnit = 'rpm' | 'tpm';

/** Something with rate limits: a gate on the request's way, or its API key. */
export type RateLimited = {
  scope: 'gate' | 'api_key';
  id: string;
  /** How a message names it: `Gate "Support"`, `API key "batch"`. */
  label: string;
  rpm: number | null;
  tpm: number | null;
};

/** One window a request must fit in: its limit, and what this request counts in it. */
type Ask = { key: string; limit: number; cost: number; limited: RateLimited; unit: RateUnit };

/** The first window that refused (its index among the asks), how long until it fits, what it holds. */
type Verdict = { refused: number; waitSeconds: number; used: number } | null;

/** An amount counted in a window at a given second (a correction goes to its admission's second). */
type Entry = { key: string; second: number; amount: number };

type Windows = {
  admit(asks: Ask[], now: number): Promise<Verdict>;
  add(entries: Entry[], now: number): Promise<void>;
};

/**
 * The seconds until `cost` fits under `limit` in a window holding `buckets` (second, amount)
 * that add up to `total`: the oldest buckets leave first. A cost over the limit never fits: a
 * whole window.
 */
function waitSeconds(buckets: [number, number][], total: number, cost: number, limit: number, now: number) {
  let left = total;
  for (const [second, amount] of buckets.sort((a, b) => a[0] - b[0])) {
    left -= amount;
    if (left + cost <= limit) return Math.max(1, second + WINDOW_SECONDS - now);
  }
  return WINDOW_SECONDS;
}

/** The windows in this process's memory: without Redis, and while Redis cannot be reached. */
function memoryWindows(): Windows {
  const windows = new Map<string, Map<number, number>>();
  let sinceSweep = 0;
  /** The window's live buckets, the expired ones dropped (and the window, once empty). */
  const live = (key: string, now: number) => {
    const window = windows.get(key);
    if (!window) return new Map<number, number>();
    for (const second of window.keys()) if (second <= now - WINDOW_SECONDS) window.delete(second);
    if (window.size === 0) windows.delete(key);
    return window;
  };
  const count = (key: string, second: number, amount: number) => {
    const window = windows.get(key) ?? new Map<number, number>();
    window.set(second, (window.get(second) ?? 0) + amount);
    windows.set(key, window);
  };
  return {
    async admit(asks, now) {
      // Windows no request has asked for in a while are dropped now and then.
      if (++sinceSweep >= 10_000) {
        sinceSweep = 0;
        for (const key of [...windows.keys()]) live(key, now);
      }
      for (const [i, ask] of asks.entries()) {
        const buckets = [...live(ask.key, now)];
        const used = buckets.reduce((n, [, amount]) => n + amount, 0);
        if (used + ask.cost > ask.limit) {
          return { refused: i, waitSeconds: waitSeconds(buckets, used, ask.cost, ask.limit, now), used };
        }
      }
      for (const ask of asks) if (ask.cost !== 0) count(ask.key, now, ask.cost);
      return null;
    },
    async add(entries, now) {
      for (const e of entries) if (e.second > now - WINDOW_SECONDS) count(e.key, e.second, e.amount);
    },
  };
}

/**
 * memoryWindows' admit, in Redis, atomically over every window a request asks. KEYS: the windows
 * (hashes of second -> amount); ARGV: now (seconds), the window's length, then each key's limit
 * and cost. Answers {0} when admitted, else {the refusing key's index, seconds to wait, used}.
 */
const ADMIT_SCRIPT = `
local now = tonumber(ARGV[1])
local span = tonumber(ARGV[2])
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[1 + 2 * i])
  local cost = tonumber(ARGV[2 + 2 * i])
  local flat = redis.call('HGETALL', key)
  local used = 0
  local live = {}
  for j = 1, #flat, 2 do
    local second = tonumber(flat[j])
    if second <= now - span then
      redis.call('HDEL', key, flat[j])
    else
      used = used + tonumber(flat[j + 1])
      live[#live + 1] = { second, tonumber(flat[j + 1]) }
    end
  end
  if used + cost > limit then
    table.sort(live, function(a, b) return a[1] < b[1] end)
    local left = used
    for _, bucket in ipairs(live) do
      left = left - bucket[2]
      if left + cost <= limit then return { i, math.max(1, bucket[1] + span - now), used } end
    end
    return { i, span, used }
  end
end
for i, key in ipairs(KEYS) do
  local cost = tonumber(ARGV[2 + 2 * i])
  if cost ~= 0 then
    redis.call('HINCRBY', key, ARGV[1], cost)
    redis.call('EXPIRE', key, span + 1)
  end
end
return { 0 }`;

type ScriptedRedis = Redis & { gatehouseRateAdmit(...args: (string | number)[]): Promise<number[]> };
const scripted = new WeakSet<Redis>();

function redisWindows(client: Redis): Windows {
  if (!scripted.has(client)) {
    // EVALSHA, and the script sent again whenever Redis has forgotten it (after a restart).
    client.defineCommand('gatehouseRateAdmit', { lua: ADMIT_SCRIPT });
    scripted.add(client);
  }
  return {
    async admit(asks, now) {
      const args = asks.flatMap((a) => [a.limit, a.cost]);
      const [index = 0, wait = 0, used = 0] = await (client as ScriptedRedis).gatehouseRateAdmit(
        asks.length,
        ...asks.map((a) => a.key),
        now,
        WINDOW_SECONDS,
        ...args,
      );
      return index === 0 ? null : { refused: index - 1, waitSeconds: wait, used };
    },
    async add(entries, now) {
      const live = entries.filter((e) => e.second > now - WINDOW_SECONDS && e.amount !== 0);
      if (live.length === 0) return;
      const batch = client.multi();
      for (const e of live) {
        batch.hincrby(e.key, String(e.second), e.amount).expire(e.key, WINDOW_SECONDS + 1);
      }
      await batch.exec();
    },
  };
}

/** What an admitted request settles once its answer (or failure) is known. */
export type RateAdmission = {
  /**
   * The request's actual tokens: its prompt (replacing what admission counted) and completion.
   * Null keeps what admission counted as it is.
   */
  settle(usage: { promptTokens: number; completionTokens: number } | null): Promise<void>;
};

const NOTHING_TO_SETTLE: RateAdmission = { settle: async () => {} };

/** The gates of a request's scopes and its API key, each as a RateLimited with its label. */
export function rateLimitedOf(scopes: LimitScope[], apiKey: ApiKey | undefined): RateLimited[] {
  const limited: RateLimited[] = [];
  for (const scope of scopes) {
    if (scope.kind !== 'gate') continue;
    const { gate, role } = scope;
    const kind = role === 'agent_gate' ? 'Agent gate' : role === 'sub_gate' ? 'Sub-gate' : 'Gate';
    limited.push({
      scope: 'gate',
      id: gate.id,
      label: `${kind} "${gate.name}"`,
      rpm: gate.rateLimitRpm,
      tpm: gate.rateLimitTpm,
    });
  }
  if (apiKey) {
    limited.push({
      scope: 'api_key',
      id: apiKey.id,
      label: `API key "${apiKey.name}"`,
      rpm: apiKey.rateLimitRpm,
      tpm: apiKey.rateLimitTpm,
    });
  }
  return limited;
}

const wait = (seconds: number) => (seconds === 1 ? '1 second' : `${seconds} seconds`);

function refusal(ask: Ask, verdict: NonNullable<Verdict>): RateLimitedError {
  const { limited, unit, limit, cost } = ask;
  const field = unit === 'rpm' ? 'rateLimitRpm' : 'rateLimitTpm';
  const details = {
    scope: limited.scope,
    [limited.scope === 'gate' ? 'gateId' : 'apiKeyId']: limited.id,
    limit: field,
    limitPerMinute: limit,
    usedInWindow: verdict.used,
    ...(unit === 'tpm' && { promptTokens: cost }),
  };
  let message: string;
  if (unit === 'rpm') {
    message = `${limited.label} allows ${limit} requests per minute (${field}); try again in ${wait(verdict.waitSeconds)}`;
  } else if (cost > limit) {
    message = `${limited.label} allows ${limit} tokens per minute (${field}), and this request's prompt alone is ~${cost} tokens; send a shorter prompt or raise the limit`;
  } else {
    message = `${limited.label} allows ${limit} tokens per minute (${field}); ${Math.max(verdict.used, 0)} were used in the last minute and this request's prompt is ~${cost}: try again in ${wait(verdict.waitSeconds)}`;
  }
  return new RateLimitedError(message, verdict.waitSeconds, details);
}

export type RateLimits = ReturnType<typeof createRateLimits>;

/**
 * The rate limits of a process. `clock` (milliseconds) decides the window's seconds: tests move
 * it; `shared` is the Redis connection, when there is one (the process's, by default).
 */
export function createRateLimits(
  opts: { clock?: () => number; shared?: () => Redis | null; prefix?: string } = {},
) {
  const clock = opts.clock ?? Date.now;
  const tag = `{${opts.prefix ?? 'gatehouse'}}`;
  const shared = opts.shared ?? redis;
  const memory = memoryWindows();
  /** Since when Redis has failed: reported once per outage. */
  let failing = false;

  async function within<T>(use: (windows: Windows) => Promise<T>): Promise<T> {
    const client = shared();
    if (!client) return use(memory);
    try {
      const result = await use(redisWindows(client));
      if (failing) console.error('rate limits: Redis answers again; the windows are shared again');
      failing = false;
      return result;
    } catch (error) {
      if (!failing) {
        console.error(
          'rate limits: Redis cannot be reached; each process holds the limits in its own memory until it can',
          (error as Error).message,
        );
      }
      failing = true;
      return use(memory);
    }
  }

  return {
    /**
     * Admits a request within every limit of `limited`, or throws the RateLimitedError of the
     * first it does not fit. `promptTokens` is asked only where a tokens-per-minute limit applies.
     */
    async admit(
      limited: RateLimited[],
      promptTokens: () => number | Promise<number>,
    ): Promise<RateAdmission> {
      if (!limited.some((l) => l.rpm !== null || l.tpm !== null)) return NOTHING_TO_SETTLE;
      const prompt = limited.some((l) => l.tpm !== null) ? Math.max(0, Math.ceil(await promptTokens())) : 0;
      const asks: Ask[] = [];
      for (const l of limited) {
        const key = `${tag}:rate:${l.scope}:${l.id}`;
        if (l.rpm !== null) asks.push({ key: `${key}:rpm`, limit: l.rpm, cost: 1, limited: l, unit: 'rpm' });
        if (l.tpm !== null)
          asks.push({ key: `${key}:tpm`, limit: l.tpm, cost: prompt, limited: l, unit: 'tpm' });
      }
      const admitted = Math.floor(clock() / 1000);
      const verdict = await within((w) => w.admit(asks, admitted));
      if (verdict) throw refusal(asks[verdict.refused] as Ask, verdict);
      const tokens = asks.filter((a) => a.unit === 'tpm');
      if (tokens.length === 0) return NOTHING_TO_SETTLE;
      return {
        async settle(usage) {
          if (!usage) return;
          const now = Math.floor(clock() / 1000);
          const entries = tokens.flatMap((a): Entry[] => [
            { key: a.key, second: admitted, amount: usage.promptTokens - prompt },
            { key: a.key, second: now, amount: usage.completionTokens },
          ]);
          await within((w) => w.add(entries, now)).catch((error) =>
            console.error('rate limits: could not count the tokens of an answer', error),
          );
        },
      };
    },
  };
}
