/**
 * Group commit, per row (a gate's, a key's, an end user's counter): one statement at a time,
 * carrying every call that arrived while the one before it ran, in the order they were made. The
 * row's lock and commit are taken once per batch instead of once per request, so a busy row's
 * requests stop queueing on it one by one.
 */
export function groupCommit<T, R>(run: (rowKey: string, batch: T[]) => Promise<R[]>) {
  type Waiting = { item: T; resolve(r: R): void; reject(e: unknown): void };
  const queues = new Map<string, Waiting[]>();
  const busy = new Set<string>();

  async function drain(rowKey: string): Promise<void> {
    busy.add(rowKey);
    try {
      for (let batch = queues.get(rowKey); batch && batch.length > 0; batch = queues.get(rowKey)) {
        queues.delete(rowKey);
        try {
          const results = await run(
            rowKey,
            batch.map((w) => w.item),
          );
          batch.forEach((w, i) => {
            w.resolve(results[i] as R);
          });
        } catch (error) {
          for (const w of batch) w.reject(error);
        }
      }
    } finally {
      busy.delete(rowKey);
    }
  }

  return (rowKey: string, item: T): Promise<R> =>
    new Promise<R>((resolve, reject) => {
      const queue = queues.get(rowKey) ?? [];
      queue.push({ item, resolve, reject });
      queues.set(rowKey, queue);
      if (!busy.has(rowKey)) void drain(rowKey);
    });
}

/**
 * Settlements written behind the answer. A settlement that gives back part of its hold (a request
 * that cost at most its worst case) need not hold up the answer: until it lands the row counts a
 * little more than was spent, never less. One that charges more than the hold (a provider billing
 * past the cap it was sent, failed attempts charged) is waited for, so no answer leaves with the
 * row counting less than it spent. A later call on the row in this process is decided after it
 * (groupCommit keeps a row's calls in order); `landed()` waits for every one (settled(), close()).
 * Each row's latest write is kept: once it has landed, every earlier one on the row has.
 */
export function writtenBehind() {
  const latest = new Map<string, Promise<void>>();
  return {
    /**
     * `write` is the settlement's own and never rejects (the caller reports its own failure);
     * the answer waits for it only when `chargesMore`.
     */
    add(rowKey: string, write: Promise<void>, chargesMore: boolean): Promise<void> {
      const written: Promise<void> = write.finally(() => {
        if (latest.get(rowKey) === written) latest.delete(rowKey);
      });
      latest.set(rowKey, written);
      return chargesMore ? written : Promise.resolve();
    },
    landed: () => Promise.all([...latest.values()]).then(() => undefined),
  };
}
