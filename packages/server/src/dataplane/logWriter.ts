/**
 * Writes log entries off the request path: queued, then inserted in batches. The queue is
 * bounded; when it is full the request that adds an entry waits for room (back-pressure) rather
 * than an entry being dropped. close() drains it, so a SIGTERM or SIGINT loses nothing.
 */
import { prisma } from '../db/client.ts';
import type { Prisma } from '../generated/prisma/client.ts';

export type LogEntryData = Prisma.LogEntryCreateManyInput;

export type LogWriterOptions = { batchSize?: number; intervalMs?: number; maxQueue?: number };

export function createLogWriter(opts: LogWriterOptions = {}) {
  const batchSize = opts.batchSize ?? 500;
  const intervalMs = opts.intervalMs ?? 100;
  const maxQueue = opts.maxQueue ?? 20_000;
  let queue: LogEntryData[] = [];
  let writing: Promise<void> | null = null;
  let closed = false;
  let written = 0;

  async function writeAll(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.slice(0, batchSize);
      try {
        await prisma.logEntry.createMany({ data: batch });
        queue = queue.slice(batch.length);
        written += batch.length;
      } catch (error) {
        // A bad entry must not block the rest: write one by one and report the ones refused.
        console.error('log writer: batch insert failed, retrying entries one by one', error);
        queue = queue.slice(batch.length);
        for (const entry of batch) {
          await prisma.logEntry.createMany({ data: [entry] }).then(
            () => {
              written += 1;
            },
            (e) => console.error('log writer: entry refused', entry.id, e),
          );
        }
      }
    }
  }

  function flush(): Promise<void> {
    writing ??= writeAll().finally(() => {
      writing = null;
    });
    return writing;
  }

  const timer = setInterval(() => {
    if (queue.length > 0) void flush();
  }, intervalMs);
  timer.unref();

  return {
    async add(entry: LogEntryData): Promise<void> {
      if (closed) throw new Error('log writer is closed');
      while (queue.length >= maxQueue) await flush();
      queue.push(entry);
      if (queue.length >= batchSize) void flush();
    },
    /** Writes everything queued; resolves when the queue is empty. */
    async drain(): Promise<void> {
      while (queue.length > 0 || writing) await flush();
    },
    async close(): Promise<void> {
      closed = true;
      clearInterval(timer);
      while (queue.length > 0 || writing) await flush();
    },
    stats: () => ({ queued: queue.length, written }),
  };
}

export type LogWriter = ReturnType<typeof createLogWriter>;
