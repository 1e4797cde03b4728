/**
 * Logs survive a full disk: on a real filesystem that runs out of room (a small tmpfs holding
 * PGlite's data directory, or on PostgreSQL a tablespace holding the log tables), the entries of
 * requests answered meanwhile wait in the writer's queue and are all written once there is room.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogWriter } from '../src/dataplane/logWriter.ts';
import { databaseKind, testDatabaseUrl, useTestApp } from './support/app.ts';
import { chat } from './support/chat.ts';
import { canMount, useSmallDisk } from './support/disk.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';
import { entryMaker } from './support/logs.ts';

// PGlite's directory takes ~39 MB once migrated and the WAL's next file 16 MB (see below); the
// tests write ~16 MB of entries, and ~16 MB of WAL, which that file and the one recycled hold.
const disk = canMount ? useSmallDisk(databaseKind === 'pglite' ? 96 : 24) : undefined;

// Mounting needs root, which CI has; elsewhere these tests are skipped.
describe.runIf(disk)('log entries while the disk is full', () => {
  const small = disk as NonNullable<typeof disk>;
  const tablespace = `gatehouse_test_${randomUUID().replaceAll('-', '')}`;
  // Runs after the app's own afterAll has dropped its schema: a tablespace must be empty to go.
  afterAll(async () => {
    if (databaseKind !== 'postgres') return;
    const admin = new pg.Client({ connectionString: testDatabaseUrl });
    await admin.connect();
    await admin.query(`DROP TABLESPACE IF EXISTS ${tablespace}`);
    await admin.end();
  });
  const app = useTestApp({}, { dataDir: path.join(small.dir, 'data') });
  beforeAll(async () => {
    if (databaseKind === 'pglite') {
      // The WAL starts a new file before the disk is filled, and the checkpoint recycles the old
      // one as the file after it: 32 MB of WAL with no new file to make. PGlite hangs for good
      // when its WAL needs a new file on a full disk (seen on this machine: it stopped
      // answering, and did not come back once the room was freed), which no log writer can
      // help; the current file would otherwise end within what these tests write.
      await app.db.driver.exec('SELECT pg_switch_wal(); CHECKPOINT');
      return;
    }
    // The log tables (their TOAST with them) on the small disk; the rest of the schema, and the
    // WAL, stay on the server's own.
    const [found] = await app.db.driver.query<{ dir: string }>(
      "SELECT current_setting('data_directory') AS dir",
    );
    const owner = fs.statSync(found?.dir ?? '');
    const location = path.join(small.dir, 'tablespace');
    fs.mkdirSync(location);
    fs.chownSync(location, owner.uid, owner.gid);
    await app.db.driver.exec(`CREATE TABLESPACE ${tablespace} LOCATION '${location}'`);
    await app.db.driver.exec(
      `ALTER TABLE log_entries SET TABLESPACE ${tablespace}; ALTER TABLE log_media SET TABLESPACE ${tablespace}`,
    );
  });
  // Before the database is closed: PGlite writes a checkpoint as it closes.
  afterAll(() => small.unfill());

  /** A value on GET /metrics; `name` may carry labels. */
  async function metric(name: string): Promise<number> {
    const text = await (await app.request('/metrics')).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    expect(line, `${name} in ${text}`).toBeDefined();
    return Number(line?.slice(name.length + 1));
  }
  const DISK_FULL = 'gatehouse_log_write_failures_total{reason="disk_full"}';
  const WAITING = 'gatehouse_log_entries_waiting_for_disk';

  const entriesOf = (gateIds: string[]) =>
    app.db.prisma.logEntry.count({ where: { gateId: { in: gateIds } } });

  /** A chat request answered 200 whose entry is about `bytes` of incompressible text, twice over (request and echo). */
  async function answered(user: TestUser, gateId: string, bytes: number) {
    const res = await chat(app, user, gateId, {
      messages: [{ role: 'user', content: randomBytes((bytes * 3) / 4).toString('base64') }],
    });
    expect(res.status, await res.clone().text()).toBe(200);
  }

  /** Polls until `check` passes: the writer retries on its own schedule, slower on a loaded machine. */
  const eventually = (check: () => Promise<void>) => vi.waitFor(check, { timeout: 120_000, interval: 250 });

  it('keeps the entries (and files) of requests answered while the disk is full, says so once, and writes every one when it has room', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const imageGate = await createGate(app, user, { taskType: 'image', model: 'mock/image' });
    await answered(user, gate.id, 1000);
    await app.runtime.logs.drain();
    expect(await entriesOf([gate.id])).toBe(1);
    const failuresBefore = await metric(DISK_FULL);
    const errors = vi.spyOn(console, 'error');
    const said = (start: string) =>
      errors.mock.calls.filter(([first]) => typeof first === 'string' && first.startsWith(start)).length;

    small.fill();
    for (let i = 0; i < 12; i++) await answered(user, gate.id, 100_000);
    for (let i = 0; i < 3; i++) {
      const res = await app.request('/v3/image', {
        method: 'POST',
        headers: user.auth,
        json: { gateId: imageGate.id, data: { prompt: `full disk ${i}`, size: '1024x1024' } },
      });
      expect(res.status, await res.clone().text()).toBe(200);
    }

    // Refused, retried, and waiting in memory: none written, none dropped.
    await eventually(async () => {
      expect(await metric(DISK_FULL)).toBeGreaterThanOrEqual(failuresBefore + 3);
      expect(await metric(WAITING)).toBe(15);
    });
    expect(await entriesOf([gate.id, imageGate.id])).toBe(1);
    expect(await metric('gatehouse_log_entries_refused_total')).toBe(0);
    // One line for the whole episode, however many retries.
    expect(said('log writer: the database is out of disk space')).toBe(1);
    expect(said('log writer: writing again')).toBe(0);

    small.unfill();
    await eventually(async () => expect(await entriesOf([gate.id, imageGate.id])).toBe(16));
    const images = await app.db.prisma.logEntry.findMany({
      where: { gateId: imageGate.id },
      select: { id: true },
    });
    expect(
      await app.db.prisma.logMedia.count({ where: { logEntryId: { in: images.map((e) => e.id) } } }),
    ).toBe(3);
    await eventually(async () => expect(await metric(WAITING)).toBe(0));
    expect(said('log writer: the database is out of disk space')).toBe(1);
    expect(said('log writer: writing again')).toBe(1);
    errors.mockRestore();
  }, 300_000);

  it('stores part of a batch refused for space as soon as there is room for part of it', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const failuresBefore = await metric(DISK_FULL);
    small.fill();
    // Eight entries of ~0.8 MB each, ~6.4 MB (in batches of at most 4 Mi characters).
    const count = 8;
    for (let i = 0; i < count; i++) await answered(user, gate.id, 400_000);
    await eventually(async () => {
      expect(await metric(DISK_FULL)).toBeGreaterThan(failuresBefore);
      expect(await metric(WAITING)).toBe(count);
    });
    expect(await entriesOf([gate.id])).toBe(0);

    // Room for two or three of them, not for the batch.
    small.unfill();
    small.fill(2.5 * 1024 * 1024);
    await eventually(async () => expect(await entriesOf([gate.id])).toBeGreaterThanOrEqual(1));
    expect(await entriesOf([gate.id])).toBeLessThan(count);
    expect(await metric(WAITING)).toBeGreaterThan(0);

    small.unfill();
    await eventually(async () => expect(await entriesOf([gate.id])).toBe(count));
    await eventually(async () => expect(await metric(WAITING)).toBe(0));
  }, 300_000);

  // PGlite only: there, a batch of this size is refused while it is still being read (its
  // rows spill to a temporary file, deleted with the attempt), so the room is still free when
  // the writer tries a smaller part. On PostgreSQL the temporary file is on the server's own
  // disk and the first attempt takes the room until a vacuum, whatever comes after it.
  it.runIf(databaseKind === 'pglite')(
    'stores part of a batch refused with room for part of it: one entry at a time, not halves that use the room up',
    async () => {
      const entry = await entryMaker(app);
      // No timer: the batch goes out whole when drained. Larger than the default batch bound
      // (4 Mi characters) so that it is refused while being read: a batch under PostgreSQL's
      // work_mem (4 MB) is refused while inserting, and the pages it added keep the room until a
      // VACUUM, which the full disk refuses too (its visibility map cannot grow).
      const writer = createLogWriter({ intervalMs: 3_600_000, maxBatchChars: 16 * 1024 * 1024 });
      const ids = Array.from({ length: 8 }, () => randomUUID());
      small.fill(2.5 * 1024 * 1024);
      // ~0.8 MB each: a batch of ~6.4 MB for a disk with room for two or three.
      for (const id of ids)
        await writer.add({
          ...entry(id),
          providerRequest: { text: randomBytes(600_000).toString('base64') },
        });
      await writer.drain();
      const stored = await app.db.prisma.logEntry.count({ where: { id: { in: ids } } });
      expect(stored).toBeGreaterThanOrEqual(1);
      expect(stored).toBeLessThan(ids.length);
      expect(writer.stats()).toMatchObject({
        queued: ids.length - stored,
        waitingForDisk: ids.length - stored,
      });

      small.unfill();
      await writer.close();
      expect(await app.db.prisma.logEntry.count({ where: { id: { in: ids } } })).toBe(ids.length);
      expect(writer.stats()).toMatchObject({ queued: 0, waitingForDisk: 0, refused: 0 });
    },
    300_000,
  );
});
