/**
 * How long a settlement written behind its answer waits for company on an idle row. A client's
 * next request on the row reserves moments after the answer it had: made at once, the settlement's
 * statement was still running then, and the reservation waited for its commit before its own; now
 * both go in one statement, one commit. Short: a settlement that waited 5 ms helped one
 * connection's next request more, but one stream every ~5 ms (the bench's streams, taking turns
 * with direct and proxied ones) then found it running and waited for its commit (figures in the
 * commits that brought it and cut it). The hold it gives back stays counted this much longer,
 * which can only refuse, never let through, a request at the limit's edge.
 */
export const LINGER_MS = 1;

/**
 * Group commit, per row (a gate's, a key's, an end user's counter): one statement at a time,
 * carrying every call that arrived while the one before it ran, in the order they were made. The
 * row's lock and commit are taken once per batch instead of once per request, so a busy row's
 * requests stop queueing on it one by one. A call made with `linger` on an idle row waits up to
 * LINGER_MS for another call to go with it; any call without it starts the statement at once.
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

  /** Rows whose queue holds only calls that linger, and the timer that starts them. */
  const lingering = new Map<string, NodeJS.Timeout>();
  function start(rowKey: string): void {
    const timer = lingering.get(rowKey);
    if (timer) {
      clearTimeout(timer);
      lingering.delete(rowKey);
    }
    if (!busy.has(rowKey)) void drain(rowKey);
  }

  return (rowKey: string, item: T, opts: { linger?: boolean } = {}): Promise<R> =>
    new Promise<R>((resolve, reject) => {
      const queue = queues.get(rowKey) ?? [];
      queue.push({ item, resolve, reject });
      queues.set(rowKey, queue);
      // A busy row's drain takes the queue next, whatever it holds.
      if (busy.has(rowKey)) return;
      if (!opts.linger) start(rowKey);
      else if (!lingering.has(rowKey))
        lingering.set(
          rowKey,
          setTimeout(() => start(rowKey), LINGER_MS),
        );
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
