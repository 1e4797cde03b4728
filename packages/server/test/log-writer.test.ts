import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { createLogWriter } from '../src/dataplane/logWriter.ts';
import { useTestApp } from './support/app.ts';
import { entryMaker } from './support/logs.ts';

const app = useTestApp();

it('keeps entries queued while the log table cannot be written, and writes them all once it can', async () => {
  const entry = await entryMaker(app);
  const writer = createLogWriter({ intervalMs: 20 });
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  // Not a problem with the entries themselves: the table is away (as in an outage).
  await app.db.driver.exec('ALTER TABLE log_entries RENAME TO log_entries_away');
  try {
    for (const id of ids) await writer.add(entry(id));
    await new Promise((r) => setTimeout(r, 250));
    expect(writer.stats()).toMatchObject({ queued: 3, written: 0 });
  } finally {
    await app.db.driver.exec('ALTER TABLE log_entries_away RENAME TO log_entries');
  }
  await writer.close();
  const stored = await app.db.prisma.logEntry.findMany({ where: { id: { in: ids } }, select: { id: true } });
  expect(stored.map((e) => e.id).sort()).toEqual([...ids].sort());
});

it('leaves out an entry that cannot be encoded even without its payload, stores the ones around it, and gives back its files’ bytes', async () => {
  const entry = await entryMaker(app);
  const writer = createLogWriter({ intervalMs: 20 });
  const [before, broken, after] = [randomUUID(), randomUUID(), randomUUID()];
  await writer.add(entry(before));
  // A count no JSON can hold, outside the payload that is dropped first.
  await writer.add({ ...entry(broken), promptTokens: 7n as unknown as number }, [
    { mimeType: 'image/png', data: new Uint8Array(5000) },
  ]);
  expect(writer.stats().mediaBytes).toBe(5000);
  await writer.add(entry(after));
  await writer.drain();
  expect(writer.stats()).toMatchObject({
    queued: 0,
    mediaBytes: 0,
    written: 2,
    refused: 1,
    payloadDropped: 0,
  });
  await writer.close();
  const stored = await app.db.prisma.logEntry.findMany({
    where: { id: { in: [before, broken, after] } },
    select: { id: true },
  });
  expect(stored.map((e) => e.id).sort()).toEqual([before, after].sort());
  const metrics = await (await app.request('/metrics')).text();
  expect(metrics).toMatch(/^gatehouse_log_queued_media_bytes \d+$/m);
});

it('writes a batch whole or not at all, though PGlite takes it in several statements: an entry the database refuses leaves out that entry alone, counted once in the totals', async () => {
  const entry = await entryMaker(app);
  // 40 entries, fewer than a full batch: on PGlite three statements of at most 16 (logWriter.ts).
  const writer = createLogWriter({ intervalMs: 20, batchSize: 100 });
  const ids = Array.from({ length: 40 }, () => randomUUID());
  const bad = ids[35] as string;
  const first = entry(ids[0] as string);
  await Promise.all(
    // A user who does not exist: PostgreSQL refuses its row (SQLSTATE 23503), in the third statement.
    ids.map((id) => writer.add({ ...entry(id), latencyMs: 7, ...(id === bad && { userId: randomUUID() }) })),
  );
  await writer.drain();
  expect(writer.stats()).toMatchObject({ queued: 0, written: 39, refused: 1 });
  await writer.close();
  const stored = await app.db.prisma.logEntry.findMany({ where: { id: { in: ids } }, select: { id: true } });
  expect(stored.map((e) => e.id).sort()).toEqual(ids.filter((id) => id !== bad).sort());
  // The refused attempts added nothing to the hourly totals: each stored entry counted once.
  const [totals] = await app.db.driver.query<{ requests: string; latency: string }>(
    'SELECT sum(requests)::text AS requests, sum(latency_ms_sum)::text AS latency FROM log_rollups WHERE gate_id = $1',
    [first.gateId],
  );
  expect(totals).toEqual({ requests: '39', latency: String(39 * 7) });
});
