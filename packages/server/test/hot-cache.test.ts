import { describe, expect, it } from 'vitest';
import { hotCache } from '../src/domain/hotCache.ts';

/** A read the test answers when it chooses, counting how many were started. */
function reads<V>() {
  const started: { resolve: (v: V) => void; reject: (e: Error) => void }[] = [];
  const load = () =>
    new Promise<V>((resolve, reject) => {
      started.push({ resolve, reject });
    });
  return { load, started };
}

function setup(keep?: (v: string) => boolean) {
  let clock = 0;
  const cache = hotCache<string>({ ttlMs: 1000, maxEntries: 10, now: () => clock, ...(keep && { keep }) });
  return { cache, advance: (ms: number) => (clock += ms) };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('hotCache (the gate and API key caches)', () => {
  it('shares one read among the requests that find no entry, then answers from the entry', async () => {
    const { cache } = setup();
    const r = reads<string>();
    const waiting = [cache.get('k', r.load), cache.get('k', r.load), cache.get('k', r.load)];
    expect(r.started).toHaveLength(1);
    r.started[0]?.resolve('v1');
    expect(await Promise.all(waiting)).toEqual(['v1', 'v1', 'v1']);
    expect(cache.get('k', r.load)).toBe('v1');
    expect(r.started).toHaveLength(1);
  });

  it('past half its life answers at once from the entry and reads again in the background', async () => {
    const { cache, advance } = setup();
    const r = reads<string>();
    const first = cache.get('k', r.load);
    r.started[0]?.resolve('old');
    await first;
    advance(600);
    // Answered without waiting, though the new read has not answered.
    expect(cache.get('k', r.load)).toBe('old');
    expect(cache.get('k', r.load)).toBe('old');
    expect(r.started).toHaveLength(2);
    r.started[1]?.resolve('new');
    await settle();
    expect(cache.get('k', r.load)).toBe('new');
    advance(600);
    // The refreshed entry's life started at its read.
    expect(cache.get('k', r.load)).toBe('new');
    expect(r.started).toHaveLength(3);
  });

  it('waits for a read once the entry has expired', async () => {
    const { cache, advance } = setup();
    const r = reads<string>();
    const first = cache.get('k', r.load);
    r.started[0]?.resolve('old');
    await first;
    advance(1000);
    const later = cache.get('k', r.load);
    expect(later).toBeInstanceOf(Promise);
    r.started[1]?.resolve('new');
    expect(await later).toBe('new');
  });

  it('does not let a read that ran before forget put the old value back', async () => {
    const { cache } = setup();
    const r = reads<string>();
    const before = cache.get('k', r.load);
    cache.forget('k');
    const after = cache.get('k', r.load);
    r.started[1]?.resolve('written');
    r.started[0]?.resolve('stale');
    expect(await before).toBe('stale');
    expect(await after).toBe('written');
    expect(cache.get('k', r.load)).toBe('written');
  });

  it('drops the entry when a background read fails or finds a value it must not keep', async () => {
    const { cache, advance } = setup((v) => v !== 'revoked');
    const r = reads<string>();
    const first = cache.get('k', r.load);
    r.started[0]?.resolve('valid');
    await first;
    advance(600);
    expect(cache.get('k', r.load)).toBe('valid');
    r.started[1]?.resolve('revoked');
    await settle();
    // Not served again on the strength of the old read: the next request waits for a new one.
    const next = cache.get('k', r.load);
    expect(next).toBeInstanceOf(Promise);
    r.started[2]?.resolve('valid');
    await next;
    advance(600);
    expect(cache.get('k', r.load)).toBe('valid');
    r.started[3]?.reject(new Error('database unreachable'));
    await settle();
    const failedOver = cache.get('k', r.load);
    expect(failedOver).toBeInstanceOf(Promise);
    r.started[4]?.reject(new Error('database unreachable'));
    await expect(failedOver).rejects.toThrow('database unreachable');
  });

  it('forgets by value the entries that match and every read in flight, and keeps the rest', async () => {
    const { cache } = setup();
    const r = reads<string>();
    const loaded = [cache.get('a', r.load), cache.get('b', r.load)];
    r.started[0]?.resolve('owner-1');
    r.started[1]?.resolve('owner-2');
    await Promise.all(loaded);
    const inFlight = cache.get('c', r.load);
    cache.forgetWhere((owner) => owner === 'owner-1');
    r.started[2]?.resolve('owner-3, read before the change');
    await inFlight;
    expect(cache.get('a', r.load)).toBeInstanceOf(Promise);
    expect(cache.get('b', r.load)).toBe('owner-2');
    expect(cache.get('c', r.load)).toBeInstanceOf(Promise);
    cache.clear();
    expect(cache.get('b', r.load)).toBeInstanceOf(Promise);
  });
});
