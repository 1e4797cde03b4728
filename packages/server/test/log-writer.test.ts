import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { createLogWriter } from '../src/dataplane/logWriter.ts';
import { databaseKind, useTestApp } from './support/app.ts';
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

/** An entry whose provider request holds `chars` characters of a prompt, as a coding agent's turn does. */
const sized = (entry: Awaited<ReturnType<typeof entryMaker>>, id: string, chars: number) => ({
  ...entry(id),
  providerRequest: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(chars) }] },
});

it('makes a request wait for room once the entries waiting hold maxQueuedChars of JSON, however few they are, and lets it go once they are written', async () => {
  const entry = await entryMaker(app);
  const writer = createLogWriter({ intervalMs: 20, maxQueuedChars: 150_000 });
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  await app.db.driver.exec('ALTER TABLE log_entries RENAME TO log_entries_away');
  let third: Promise<void> | undefined;
  let thirdAdded = false;
  try {
    await writer.add(sized(entry, ids[0] as string, 100_000));
    await writer.add(sized(entry, ids[1] as string, 100_000));
    // Both encoded and queued (the next turn of the event loop), ~200,000 characters: past the bound.
    await new Promise((r) => setTimeout(r, 100));
    third = writer.add(sized(entry, ids[2] as string, 100)).then(() => {
      thirdAdded = true;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(thirdAdded).toBe(false);
    expect(writer.stats()).toMatchObject({ queued: 2, written: 0 });
  } finally {
    await app.db.driver.exec('ALTER TABLE log_entries_away RENAME TO log_entries');
  }
  await third;
  await writer.close();
  const stored = await app.db.prisma.logEntry.findMany({ where: { id: { in: ids } }, select: { id: true } });
  expect(stored.map((e) => e.id).sort()).toEqual([...ids].sort());
});

it('writes large entries in batches of at most maxBatchChars of JSON, and one larger than that alone', async () => {
  const entry = await entryMaker(app);
  const writer = createLogWriter({ intervalMs: 20, maxBatchChars: 250_000 });
  const ids = Array.from({ length: 5 }, () => randomUUID());
  // Queued together while the table is away, then written from one queue.
  await app.db.driver.exec('ALTER TABLE log_entries RENAME TO log_entries_away');
  try {
    for (const [i, id] of ids.entries()) await writer.add(sized(entry, id, i === 4 ? 300_000 : 100_000));
    await new Promise((r) => setTimeout(r, 100));
    expect(writer.stats()).toMatchObject({ queued: 5, written: 0 });
  } finally {
    await app.db.driver.exec('ALTER TABLE log_entries_away RENAME TO log_entries');
  }
  await writer.close();
  // Each batch is one transaction: the entries it inserted share its id (xmin).
  const rows = await app.db.driver.query<{ id: string; tx: string }>(
    'SELECT id::text, xmin::text AS tx FROM log_entries WHERE id = ANY($1::uuid[])',
    [ids],
  );
  const batches = new Map<string, number[]>();
  for (const r of rows) batches.set(r.tx, [...(batches.get(r.tx) ?? []), (ids as string[]).indexOf(r.id)]);
  const sorted = [...batches.values()].map((b) => b.sort()).sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0));
  expect(sorted).toEqual([[0, 1], [2, 3], [4]]);
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

it('stores none of the entries of an account deleted while they waited, with a gate or without, counts them refused, and stores the rest of their batch', async () => {
  const gone = await entryMaker(app);
  const kept = await entryMaker(app);
  // Written only when drained.
  const writer = createLogWriter({ intervalMs: 60_000 });
  const [withGate, withoutGate, other] = [randomUUID(), randomUUID(), randomUUID()];
  const first = gone(withGate);
  await writer.add(first);
  // Without a gate an entry adds to no hourly total: only its own key can refuse it.
  await writer.add({ ...gone(withoutGate), gateId: null, gateName: null });
  await writer.add(kept(other));
  await app.db.driver.query('DELETE FROM users WHERE id = $1::uuid', [first.userId]);
  await writer.drain();
  expect(writer.stats()).toMatchObject({ queued: 0, written: 1, refused: 2 });
  await writer.close();
  const stored = await app.db.driver.query<{ id: string }>(
    'SELECT id::text FROM log_entries WHERE id = ANY($1::uuid[])',
    [[withGate, withoutGate, other]],
  );
  expect(stored.map((r) => r.id)).toEqual([other]);
  const [orphans] = await app.db.driver.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM log_entries l WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = l.user_id)',
  );
  expect(orphans?.n).toBe(0);
});

it.runIf(databaseKind === 'pglite')(
  'on PGlite checks no key the insert resolves itself, and every other key still',
  async () => {
    const entry = await entryMaker(app);
    const writer = createLogWriter({ intervalMs: 60_000 });
    await writer.add(entry(randomUUID()));
    await writer.drain();
    await writer.close();
    // Each foreign key's triggers on log_entries: its checks on insert and update (log_entries'
    // own keys), or its actions (log_media's key, which names log_entries).
    const triggers = await app.db.driver.query<{ key: string; enabled: string }>(
      `SELECT c.conname::text AS key, string_agg(DISTINCT tg.tgenabled::text, '') AS enabled
       FROM pg_trigger tg JOIN pg_constraint c ON c.oid = tg.tgconstraint
       WHERE tg.tgrelid = 'log_entries'::regclass GROUP BY c.conname ORDER BY c.conname`,
    );
    expect(triggers).toEqual([
      { key: 'log_entries_gate_id_fkey', enabled: 'D' },
      { key: 'log_entries_gate_session_id_fkey', enabled: 'D' },
      { key: 'log_entries_user_id_fkey', enabled: 'O' },
      { key: 'log_media_log_entry_id_fkey', enabled: 'O' },
    ]);
  },
);

it('once the writer has written, deleting a gate still clears its entries’ gate, and deleting the account still takes its entries and their files', async () => {
  const entry = await entryMaker(app);
  const writer = createLogWriter({ intervalMs: 60_000 });
  const id = randomUUID();
  const written = entry(id);
  await writer.add(written, [{ mimeType: 'image/png', data: new Uint8Array(64) }]);
  await writer.drain();
  await writer.close();
  const read = async () =>
    app.db.driver.query<{ gate_id: string | null; files: number }>(
      `SELECT gate_id::text, (SELECT count(*)::int FROM log_media m WHERE m.log_entry_id = l.id) AS files
       FROM log_entries l WHERE l.id = $1::uuid`,
      [id],
    );
  expect(await read()).toEqual([{ gate_id: written.gateId, files: 1 }]);
  await app.db.driver.query('DELETE FROM gates WHERE id = $1::uuid', [written.gateId]);
  expect(await read()).toEqual([{ gate_id: null, files: 1 }]);
  await app.db.driver.query('DELETE FROM users WHERE id = $1::uuid', [written.userId]);
  expect(await read()).toEqual([]);
  const [files] = await app.db.driver.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM log_media WHERE log_entry_id = $1::uuid',
    [id],
  );
  expect(files?.n).toBe(0);
});
