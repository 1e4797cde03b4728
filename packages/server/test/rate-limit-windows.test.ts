/**
 * The rate limits' sliding windows, in memory and in Redis alike: the same behaviour from both,
 * on a clock the test moves (no test waits for a window to pass). The HTTP side (each route's
 * 429, the fields, the log) is rate-limits.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createRateLimits, type RateLimited } from '../src/dataplane/rateLimits.ts';
import { RateLimitedError } from '../src/domain/errors.ts';
import { redisAnswers, testRedisUrl } from './support/redis.ts';

const client = redisAnswers ? new Redis(testRedisUrl, { lazyConnect: true }) : null;
afterAll(async () => {
  await client?.quit();
});

function gate(limits: { rpm?: number; tpm?: number }): RateLimited {
  return {
    scope: 'gate',
    id: randomUUID(),
    label: 'Gate "g"',
    rpm: limits.rpm ?? null,
    tpm: limits.tpm ?? null,
  };
}

function key(limits: { rpm?: number; tpm?: number }): RateLimited {
  const id = randomUUID();
  return { scope: 'api_key', id, label: 'API key "k"', rpm: limits.rpm ?? null, tpm: limits.tpm ?? null };
}

/** What a refused admission threw. */
async function refusalOf(admitting: Promise<unknown>): Promise<RateLimitedError> {
  const error = await admitting.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RateLimitedError);
  return error as RateLimitedError;
}

const backends = [
  { name: 'in memory', shared: () => null },
  ...(client ? [{ name: 'in Redis', shared: () => client }] : []),
];

describe.each(backends)('rate-limit windows $name', ({ shared }) => {
  /** Limits on a clock of their own, starting now (in whole seconds) and moved by `tick`. */
  function limitsOnClock() {
    let now = Math.floor(Date.now() / 1000) * 1000;
    const limits = createRateLimits({ clock: () => now, shared });
    return { limits, tick: (seconds: number) => (now += seconds * 1000) };
  }

  it('admits 10 requests a minute, refuses the 11th until the oldest leaves the window', async () => {
    const { limits, tick } = limitsOnClock();
    const g = gate({ rpm: 10 });
    for (let i = 0; i < 10; i++) {
      await limits.admit([g], () => 0);
      tick(1);
    }
    // 10 s after the first: it leaves the window 50 s from now.
    const refused = await refusalOf(limits.admit([g], () => 0));
    expect(refused.retryAfterSeconds).toBe(50);
    expect(refused.message).toBe(
      'Gate "g" allows 10 requests per minute (rateLimitRpm); try again in 50 seconds',
    );
    expect(refused.details).toMatchObject({ scope: 'gate', gateId: g.id, limit: 'rateLimitRpm' });
    tick(49);
    expect((await refusalOf(limits.admit([g], () => 0))).retryAfterSeconds).toBe(1);
    tick(1);
    await limits.admit([g], () => 0);
    // The first has left and its place is taken again; the second leaves a second later.
    expect((await refusalOf(limits.admit([g], () => 0))).retryAfterSeconds).toBe(1);
  });

  it('holds 10 a minute under 30 concurrent admissions', async () => {
    const { limits } = limitsOnClock();
    const g = gate({ rpm: 10 });
    const results = await Promise.allSettled(Array.from({ length: 30 }, () => limits.admit([g], () => 0)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
  });

  it('counts a prompt at admission, then its actual tokens and the completion once settled', async () => {
    const { limits, tick } = limitsOnClock();
    const g = gate({ tpm: 100 });
    const first = await limits.admit([g], () => 60);
    // The first is still under way: its 60 prompt tokens leave room for 40.
    const refused = await refusalOf(limits.admit([g], () => 41));
    expect(refused.message).toMatch(
      /^Gate "g" allows 100 tokens per minute \(rateLimitTpm\); 60 were used in the last minute and this request's prompt is ~41: try again in 60 seconds$/,
    );
    expect(refused.details).toMatchObject({ limit: 'rateLimitTpm', promptTokens: 41, usedInWindow: 60 });
    tick(5);
    // The provider counted 50 prompt tokens and wrote 30: 80 used.
    await first.settle({ promptTokens: 50, completionTokens: 30 });
    const second = await limits.admit([g], () => 20);
    await refusalOf(limits.admit([g], () => 1));
    // Refused before any provider read it: its prompt is given back.
    await second.settle({ promptTokens: 0, completionTokens: 0 });
    await limits.admit([g], () => 20);
  });

  it('refuses a prompt larger than the limit whatever the window holds', async () => {
    const { limits } = limitsOnClock();
    const refused = await refusalOf(limits.admit([gate({ tpm: 100 })], () => 150));
    expect(refused.message).toBe(
      `Gate "g" allows 100 tokens per minute (rateLimitTpm), and this request's prompt alone is ~150 tokens; send a shorter prompt or raise the limit`,
    );
    expect(refused.retryAfterSeconds).toBe(60);
  });

  it("holds a gate's and a key's limits together: a refusal counts in neither", async () => {
    const { limits } = limitsOnClock();
    const limitedGate = gate({ rpm: 2 });
    const otherGate = gate({});
    const k = key({ rpm: 3 });
    await limits.admit([limitedGate, k], () => 0);
    await limits.admit([limitedGate, k], () => 0);
    const byGate = await refusalOf(limits.admit([limitedGate, k], () => 0));
    expect(byGate.message).toMatch(/^Gate "g" allows 2 requests per minute/);
    // The key's window holds the two admitted, not the one the gate refused.
    await limits.admit([otherGate, k], () => 0);
    const byKey = await refusalOf(limits.admit([otherGate, k], () => 0));
    expect(byKey.message).toMatch(/^API key "k" allows 3 requests per minute \(rateLimitRpm\)/);
    expect(byKey.details).toMatchObject({ scope: 'api_key', apiKeyId: k.id });
  });

  it('counts nothing and asks for no prompt where no limit is set', async () => {
    const { limits } = limitsOnClock();
    const prompt = vi.fn(() => 10);
    await limits.admit([gate({ rpm: 5 }), key({})], prompt);
    expect(prompt).not.toHaveBeenCalled();
  });
});

describe('rate-limit windows while Redis cannot be reached', () => {
  it("holds the limits in the process's own memory, and says so once", async () => {
    const unreachable = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const limits = createRateLimits({ shared: () => unreachable });
      const g = gate({ rpm: 3 });
      for (let i = 0; i < 3; i++) await limits.admit([g], () => 0);
      await refusalOf(limits.admit([g], () => 0));
      const told = errors.mock.calls.filter((c) =>
        String(c[0]).startsWith('rate limits: Redis cannot be reached'),
      );
      expect(told).toHaveLength(1);
    } finally {
      errors.mockRestore();
      unreachable.disconnect();
    }
  });
});
