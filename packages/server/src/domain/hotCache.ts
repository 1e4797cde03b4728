/**
 * What the hot path reads on every request (API keys, gates), kept for a short time so a request
 * does not wait for the database. One implementation of the rules both caches follow:
 *
 * - An entry is used for `ttlMs` after it was read; so another process's change is seen within it.
 * - From half of that on, the next request is answered from the entry while a fresh read runs in
 *   the background: at steady traffic no request waits for a read. Before, every request that
 *   arrived while an expired entry was read again waited for it, behind whatever the database
 *   was doing (a batch of log entries, say), every `ttlMs`.
 * - The requests that find no usable entry share one read instead of sending one each.
 * - `forget` (called after a write) drops the entry and the read in flight, so a read that ran
 *   before the write cannot put the old value back. `forgetWhere` does so by value (a key's owner,
 *   a gate's id), for changes announced by what they are rather than by the cache's key; it drops
 *   every read in flight, whose values are not known yet. `clear` drops everything.
 * - `ttlMs` may be overridden for every cache at once (setHotCacheTtl): a deployment whose changes
 *   reach every process through notifications may keep entries longer.
 * - A background read that fails, or finds a value `keep` refuses, drops the entry: nothing is
 *   served on the strength of a read that did not confirm it.
 */
let ttlOverrideMs: number | undefined;

/** Sets the life of every cache's entries (GATEHOUSE_CACHE_TTL_MS); undefined restores each one's. */
export function setHotCacheTtl(ms: number | undefined): void {
  ttlOverrideMs = ms;
}

export function hotCache<V>(options: {
  ttlMs: number;
  maxEntries: number;
  keep?: (value: V) => boolean;
  now?: () => number;
}) {
  const now = options.now ?? (() => performance.now());
  const entries = new Map<string, { value: V; at: number }>();
  const reads = new Map<string, Promise<V>>();

  function read(key: string, load: () => Promise<V>): Promise<V> {
    const pending = reads.get(key);
    if (pending) return pending;
    // The entry's life starts when the read does: what it finds is at least that fresh.
    const startedAt = now();
    const promise: Promise<V> = load()
      .then(
        (value) => {
          if (reads.get(key) === promise) {
            if (options.keep?.(value) ?? true) {
              if (entries.size >= options.maxEntries) entries.clear();
              entries.set(key, { value, at: startedAt });
            } else entries.delete(key);
          }
          return value;
        },
        (error: unknown) => {
          if (reads.get(key) === promise) entries.delete(key);
          throw error;
        },
      )
      .finally(() => {
        if (reads.get(key) === promise) reads.delete(key);
      });
    reads.set(key, promise);
    return promise;
  }

  return {
    /** The entry's value, or `load()`'s once it answers. */
    get(key: string, load: () => Promise<V>): V | Promise<V> {
      const hit = entries.get(key);
      if (hit) {
        const age = now() - hit.at;
        const ttlMs = ttlOverrideMs ?? options.ttlMs;
        if (age < ttlMs) {
          // The request is answered either way; a failure is the next request's to see.
          if (age >= ttlMs / 2 && !reads.has(key)) read(key, load).catch(() => {});
          return hit.value;
        }
      }
      return read(key, load);
    },
    forget(key: string): void {
      entries.delete(key);
      reads.delete(key);
    },
    forgetWhere(matches: (value: V) => boolean): void {
      for (const [key, entry] of entries) if (matches(entry.value)) entries.delete(key);
      reads.clear();
    },
    clear(): void {
      entries.clear();
      reads.clear();
    },
  };
}
