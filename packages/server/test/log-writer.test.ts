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
