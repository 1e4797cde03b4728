/**
 * The embedded database runs on a thread of its own (src/db/pgliteThread.ts). What the server
 * relies on across that boundary: statements do not hold up the request thread, errors keep
 * PGlite's class and fields (Prisma maps them by both), transactions commit or roll back whole,
 * and a caller's own parsers still apply.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { messages } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNewDataDir, openPgliteThread, type PGliteThread } from '../src/db/pgliteThread.ts';

let db: PGliteThread;

beforeAll(async () => {
  db = await openPgliteThread('memory://', {});
  await db.exec('CREATE TABLE items (id integer PRIMARY KEY, price numeric(10, 2))');
});
afterAll(async () => {
  await db.close();
});

const count = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM items')).rows[0]?.n;

describe('the embedded database on its own thread', () => {
  it('leaves the request thread free while a statement runs', async () => {
    const order: string[] = [];
    const statement = db.query('SELECT pg_sleep(0.4)').then(() => order.push('statement'));
    // On the request thread, this timer could not fire until the statement had returned.
    await new Promise((resolve) => setTimeout(resolve, 20));
    order.push('timer');
    await statement;
    expect(order).toEqual(['timer', 'statement']);
  });

  it('hands back database errors as PGlite DatabaseErrors with their SQLSTATE and detail', async () => {
    await db.query('INSERT INTO items VALUES (1, 1.5)');
    const error = await db.query('INSERT INTO items VALUES (1, 2.5)').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(messages.DatabaseError);
    expect(error).toMatchObject({
      code: '23505',
      detail: 'Key (id)=(1) already exists.',
      table: 'items',
      query: 'INSERT INTO items VALUES (1, 2.5)',
    });
    await db.query('DELETE FROM items');
  });

  it('commits a transaction whole, and rolls back every statement of one that throws', async () => {
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO items VALUES (10, 1)');
      await tx.query('INSERT INTO items VALUES (11, 1)');
    });
    expect(await count()).toBe(2);
    const failed = db.transaction(async (tx) => {
      await tx.query('INSERT INTO items VALUES (12, 1)');
      throw new Error('changed my mind');
    });
    await expect(failed).rejects.toThrow('changed my mind');
    expect(await count()).toBe(2);
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO items VALUES (13, 1)');
      await tx.rollback();
    });
    expect(await count()).toBe(2);
    await db.query('DELETE FROM items');
  });

  it('writes a batch whole or not at all, and after a failed one the same statements run again', async () => {
    const add = {
      sql: 'INSERT INTO items SELECT (x->>0)::int, (x->>1)::numeric FROM jsonb_array_elements($1::jsonb) x',
      params: ['[[20, 1], [21, 2]]'],
    };
    const bump = {
      sql: 'UPDATE items SET price = price + $1::numeric WHERE id >= $2::int',
      params: ['0.5', 20],
    };
    await db.batch([add, bump]);
    // Each statement text is prepared once for the thread: the second batch binds it again.
    await db.batch([{ ...add, params: ['[[22, 3]]'] }, bump]);
    const prices = async () =>
      (await db.query<{ price: string }>('SELECT price::text FROM items ORDER BY id')).rows.map(
        (r) => r.price,
      );
    expect(await prices()).toEqual(['2.00', '3.00', '3.50']);

    // A new statement prepared in a batch that fails further on: nothing of the batch stays,
    // and the statement runs again in the next batch.
    const remove = { sql: 'DELETE FROM items WHERE id = $1::int', params: [22] };
    const failing = db.batch([remove, { ...add, params: ['[[20, 9]]'] }]);
    await expect(failing).rejects.toMatchObject({ code: '23505' });
    expect(await prices()).toEqual(['2.00', '3.00', '3.50']);
    await db.batch([remove, bump]);
    expect(await prices()).toEqual(['2.50', '3.50']);
    await db.query('DELETE FROM items');
  });

  it('runs the same statement twice in a batch, and batches sent at once, each as written', async () => {
    const add = (id: number) => ({
      sql: 'INSERT INTO items VALUES ($1::int, $2::numeric)',
      params: [id, '1'],
    });
    const double = { sql: 'UPDATE items SET price = price * 2 WHERE id = $1::int', params: [30] };
    await db.batch([add(30), add(31), double, double]);
    // Two batches at once, each with a statement text new to the thread.
    const halve = { sql: 'UPDATE items SET price = price / 2 WHERE id = $1::int', params: [31] };
    const triple = { sql: 'UPDATE items SET price = price * 3 WHERE id = $1::int', params: [31] };
    await Promise.all([db.batch([halve, double]), db.batch([triple, double])]);
    await db.batch([halve, triple, double]);
    const rows = await db.query<{ id: number; price: string }>(
      'SELECT id, price::text FROM items ORDER BY id',
    );
    expect(rows.rows).toEqual([
      { id: 30, price: '32.00' },
      { id: 31, price: '2.25' },
    ]);
    await db.query('DELETE FROM items');
  });

  it.each([
    ['a statement', (id: number) => db.query(`INSERT INTO items VALUES (${id}, 1)`)],
    ['a prepared statement', (id: number) => db.prepared('INSERT INTO items VALUES ($1::integer, 1)', [id])],
  ])('runs %s sent during a transaction after it, never inside it', async (_what, send) => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let outside!: Promise<unknown>;
    const tx = db.transaction(async (t) => {
      await t.query('INSERT INTO items VALUES (20, 1)');
      // Sent from outside while the transaction is open: it must not join it.
      outside = send(21);
      await held;
      await t.rollback();
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    release();
    await tx;
    await outside;
    expect((await db.query<{ id: number }>('SELECT id FROM items ORDER BY id')).rows).toEqual([{ id: 21 }]);
    await db.query('DELETE FROM items');
  });

  it('runs a prepared statement as a query would: arrays, dates and nulls as parameters, the same rows back, again and again', async () => {
    const sql = `SELECT $1::numeric[] AS amounts, cardinality($2::text[]) AS n, $3::timestamptz AS at,
      $4::boolean AS yes, $5::text AS nothing, $2::text[] AS texts`;
    const params = [['0.25', null, '1e3'], ['a "quoted", \\ one', '{braces}', ''], new Date(0), true, null];
    const expected = await db.query(sql, params);
    for (let i = 0; i < 3; i++) {
      const run = await db.prepared(sql, params);
      expect(run.rows).toEqual(expected.rows);
      expect(run.fields).toEqual(expected.fields);
    }
    expect(expected.rows[0]).toMatchObject({
      n: 3,
      texts: ['a "quoted", \\ one', '{braces}', ''],
      yes: true,
      nothing: null,
    });
  });

  it("hands back a prepared statement's errors as a query's, and runs it again after one", async () => {
    const insert = 'INSERT INTO items VALUES ($1::integer, $2::numeric) RETURNING id';
    expect((await db.prepared<{ id: number }>(insert, [40, '1.5'])).rows).toEqual([{ id: 40 }]);
    const error = await db.prepared(insert, [40, '2.5']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(messages.DatabaseError);
    expect(error).toMatchObject({ code: '23505', detail: 'Key (id)=(40) already exists.' });
    // A statement whose first run fails is not kept: it is parsed again next time.
    const fresh = 'INSERT INTO items VALUES ($1::integer, 1) RETURNING id';
    expect(await db.prepared(fresh, [40]).catch((e: unknown) => (e as { code?: string }).code)).toBe('23505');
    expect((await db.prepared<{ id: number }>(fresh, [41])).rows).toEqual([{ id: 41 }]);
    expect((await db.prepared<{ id: number }>(insert, [42, '2.5'])).rows).toEqual([{ id: 42 }]);
    await db.query('DELETE FROM items');
  });

  it('parses a prepared statement again after it failed to parse, once what it names exists', async () => {
    const sql = 'SELECT count(*)::int AS n FROM made_later WHERE id > $1::integer';
    const error = await db.prepared(sql, [0]).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: '42P01' });
    await db.exec('CREATE TABLE made_later (id integer)');
    expect((await db.prepared<{ n: number }>(sql, [0])).rows).toEqual([{ n: 0 }]);
    await db.exec('DROP TABLE made_later');
  });

  it("applies the caller's own parsers, which cannot cross threads", async () => {
    await db.query('INSERT INTO items VALUES (30, 12.5)');
    const NUMERIC = 1700;
    const result = await db.query<[number, string]>('SELECT id, price FROM items', [], {
      rowMode: 'array',
      parsers: { [NUMERIC]: (value: string) => `$${value}` },
    });
    expect(result.rows).toEqual([[30, '$12.50']]);
    await db.query('DELETE FROM items');
  });

  it('refuses work once closed, saying why', async () => {
    const other = await openPgliteThread('memory://', {});
    await other.close();
    await expect(other.query('SELECT 1')).rejects.toThrow(/database thread exited/);
  });

  it('creates a new data directory in a child process that is gone once it is closed', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-install-'));
    const children = () =>
      execFileSync('ps', ['-o', 'pid=', '--ppid', String(process.pid)], { encoding: 'utf8' })
        .split('\n')
        .filter((line) => line.trim() !== '' && !line.includes('ps'));
    try {
      const before = children().length;
      const installer = await openPgliteThread(dir, {}, { process: true });
      expect(children().length).toBe(before + 1);
      await installer.exec('CREATE TABLE kept (id integer)');
      await installer.query('INSERT INTO kept VALUES (7)');
      await installer.close();
      expect(children().length).toBe(before);
      expect(isNewDataDir(dir)).toBe(false);
      // What it wrote is there for the thread that serves.
      const server = await openPgliteThread(dir, {});
      expect((await server.query('SELECT id FROM kept')).rows).toEqual([{ id: 7 }]);
      await server.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
