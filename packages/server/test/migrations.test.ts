/**
 * The drift test: the database the hand-written migrations build is the one prisma/schema.prisma
 * describes (tables, columns with their SQL types, nullability and defaults, primary keys,
 * unique and plain indexes with column order and direction, foreign keys with their actions),
 * on PGlite and on PostgreSQL alike. schema.prisma is read as Prisma's DMMF, which
 * scripts/dmmf-generator.mjs writes on `prisma generate`; its `Unsupported("…")` columns (which the
 * DMMF leaves out) are read from the schema's text, and an index's method (GIN) is compared too.
 * Then the migrator itself.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { DMMF } from '@prisma/generator-helper';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrationsDir } from '../src/config.ts';
import { openPglite, openPostgres, type SqlDriver } from '../src/db/driver.ts';
import { migrate, readMigrations } from '../src/db/migrate.ts';
import { testDatabaseUrl, useTestApp } from './support/app.ts';

const app = useTestApp();

const serverDir = path.resolve(import.meta.dirname, '..');
const schemaFile = path.resolve(serverDir, '../../prisma/schema.prisma');
const datamodel = (
  JSON.parse(readFileSync(path.join(serverDir, 'src/generated/dmmf.json'), 'utf8')) as {
    datamodel: DMMF.Datamodel;
  }
).datamodel;

const MIGRATIONS_TABLE = '_gatehouse_migrations';

// ---------------------------------------------------------------------------------------------
// What schema.prisma says, in the words PostgreSQL's catalog uses
// ---------------------------------------------------------------------------------------------

const modelByName = new Map(datamodel.models.map((m) => [m.name, m]));

/** Each model's `Unsupported("type")` fields (the DMMF omits them): name, column and SQL type. */
const schemaSource = readFileSync(schemaFile, 'utf8');
const unsupportedFields = new Map(
  [...schemaSource.matchAll(/^model\s+(\w+)\s*\{([\s\S]*?)^\}/gm)].map(([, model, body]) => [
    model as string,
    [...(body ?? '').matchAll(/^\s+(\w+)\s+Unsupported\("(\w+)"\)(\?)?(?:.*@map\("(\w+)"\))?/gm)].map(
      ([, name, type, optional, mapped]) => ({
        name: name as string,
        column: mapped ?? (name as string),
        type: type as string,
        notNull: optional !== '?',
      }),
    ),
  ]),
);
const tableOf = (model: DMMF.Model) => model.dbName ?? model.name;
const columnOf = (field: DMMF.Field) => field.dbName ?? field.name;
const scalarFields = (model: DMMF.Model) =>
  model.fields.filter((f) => f.kind === 'scalar' || f.kind === 'enum');

function fieldOf(model: DMMF.Model, name: string): DMMF.Field {
  const unsupported = unsupportedFields.get(model.name)?.find((f) => f.name === name);
  if (unsupported) return { name, dbName: unsupported.column } as DMMF.Field;
  const field = model.fields.find((f) => f.name === name);
  if (!field) throw new Error(`${model.name} has no field ${name}`);
  return field;
}

/** The type as `format_type()` prints it for the column Prisma would create. */
function sqlType(field: DMMF.Field): string {
  const [native, args] = (field.nativeType ?? [null, []]) as [string | null, string[]];
  const unsupported = () => new Error(`the drift test knows no SQL type for ${field.type} @db.${native}`);
  let base: string;
  switch (field.type) {
    case 'String':
      if (native === null || native === 'Text') base = 'text';
      else if (native === 'Uuid') base = 'uuid';
      else throw unsupported();
      break;
    case 'Boolean':
      base = 'boolean';
      break;
    case 'Int':
      if (native !== null && native !== 'Integer') throw unsupported();
      base = 'integer';
      break;
    case 'BigInt':
      base = 'bigint';
      break;
    case 'Float':
      if (native !== null && native !== 'DoublePrecision') throw unsupported();
      base = 'double precision';
      break;
    case 'Decimal':
      if (native !== null && native !== 'Decimal') throw unsupported();
      base = `numeric(${args[0] ?? 65},${args[1] ?? 30})`;
      break;
    case 'DateTime': {
      if (native !== null && native !== 'Timestamptz' && native !== 'Timestamp') throw unsupported();
      const zone = native === 'Timestamptz' ? 'with' : 'without';
      base = `timestamp(${args[0] ?? 3}) ${zone} time zone`;
      break;
    }
    case 'Json':
      if (native !== null && native !== 'JsonB') throw unsupported();
      base = 'jsonb';
      break;
    case 'Bytes':
      base = 'bytea';
      break;
    default:
      throw unsupported();
  }
  return field.isList ? `${base}[]` : base;
}

/** The default as `pg_get_expr()` prints it, or null where Prisma sets none in the database. */
function sqlDefault(field: DMMF.Field): string | null {
  if (!field.hasDefaultValue) return null;
  const value = field.default as unknown;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const fn = value as { name: string; args: unknown[] };
    if (fn.name === 'now') return 'CURRENT_TIMESTAMP';
    // uuid() and cuid() are filled in by the Prisma client, not by the database.
    if (fn.name === 'uuid' || fn.name === 'cuid') return null;
    if (fn.name === 'dbgenerated') return String(fn.args[0]);
    throw new Error(`the drift test knows no default ${fn.name}() (${field.name})`);
  }
  if (field.isList) {
    if (Array.isArray(value) && value.length === 0) return `ARRAY[]::${sqlType(field)}`;
    throw new Error(`the drift test knows no list default other than [] (${field.name})`);
  }
  const quoted = (text: string, type: string) => `'${text.replaceAll("'", "''")}'::${type}`;
  switch (field.type) {
    case 'String':
      return quoted(String(value), 'text');
    case 'Json':
      return quoted(String(value), 'jsonb');
    case 'Boolean':
      return String(value);
    case 'Int':
    case 'BigInt':
    case 'Float':
    case 'Decimal':
      return String(value);
    default:
      throw new Error(`the drift test knows no default for ${field.type} (${field.name})`);
  }
}

type Column = { type: string; notNull: boolean; default: string | null };
type Index = { table: string; unique: boolean; primary: boolean; method: string; columns: string };
type ForeignKey = {
  table: string;
  columns: string;
  refTable: string;
  refColumns: string;
  onDelete: string;
  onUpdate: string;
};

const REFERENTIAL_ACTION: Record<string, string> = {
  Cascade: 'c',
  Restrict: 'r',
  NoAction: 'a',
  SetNull: 'n',
  SetDefault: 'd',
};

/** Prisma's default constraint and index names (longer ones would be cut to 63 characters). */
function prismaName(table: string, columns: string[], suffix: 'pkey' | 'key' | 'idx' | 'fkey'): string {
  const name = suffix === 'pkey' ? `${table}_pkey` : `${table}_${columns.join('_')}_${suffix}`;
  if (name.length > 63) throw new Error(`the drift test does not shorten long names like Prisma: ${name}`);
  return name;
}

function expectedColumns(model: DMMF.Model): Record<string, Column> {
  return Object.fromEntries([
    ...scalarFields(model).map((f) => [
      columnOf(f),
      // prisma migrate creates list columns without NOT NULL, whatever the field says.
      { type: sqlType(f), notNull: f.isRequired && !f.isList, default: sqlDefault(f) },
    ]),
    ...(unsupportedFields.get(model.name) ?? []).map((f) => [
      f.column,
      { type: f.type, notNull: f.notNull, default: null },
    ]),
  ]);
}

function expectedIndexes(): Record<string, Index> {
  const indexes: Record<string, Index> = {};
  for (const index of datamodel.indexes) {
    const model = modelByName.get(index.model);
    if (!model) throw new Error(`index on unknown model ${index.model}`);
    const table = tableOf(model);
    const columns = index.fields.map((f) => columnOf(fieldOf(model, f.name)));
    const suffix = index.type === 'id' ? 'pkey' : index.type === 'unique' ? 'key' : 'idx';
    if (index.type === 'fulltext') throw new Error('the drift test knows no fulltext index');
    indexes[index.dbName ?? prismaName(table, columns, suffix)] = {
      table,
      unique: index.type !== 'normal',
      primary: index.type === 'id',
      method: ((index as { algorithm?: string }).algorithm ?? 'btree').toLowerCase(),
      columns: index.fields
        .map((f) => `${columnOf(fieldOf(model, f.name))} ${f.sortOrder === 'desc' ? 'DESC' : 'ASC'}`)
        .join(', '),
    };
  }
  return indexes;
}

function expectedForeignKeys(): Record<string, ForeignKey> {
  const keys: Record<string, ForeignKey> = {};
  for (const model of datamodel.models) {
    for (const relation of model.fields.filter((f) => f.kind === 'object' && f.relationFromFields?.length)) {
      const target = modelByName.get(relation.type);
      if (!target) throw new Error(`relation to unknown model ${relation.type}`);
      const from = (relation.relationFromFields ?? []).map((n) => fieldOf(model, n));
      const to = (relation.relationToFields ?? []).map((n) => fieldOf(target, n));
      // Prisma's defaults: Restrict for a required relation, SetNull for an optional one; Cascade on update.
      const onDelete =
        relation.relationOnDelete ?? (from.every((f) => f.isRequired) ? 'Restrict' : 'SetNull');
      const onUpdate = (relation as { relationOnUpdate?: string }).relationOnUpdate ?? 'Cascade';
      const columns = from.map(columnOf);
      keys[prismaName(tableOf(model), columns, 'fkey')] = {
        table: tableOf(model),
        columns: columns.join(', '),
        refTable: tableOf(target),
        refColumns: to.map(columnOf).join(', '),
        onDelete: REFERENTIAL_ACTION[onDelete] ?? onDelete,
        onUpdate: REFERENTIAL_ACTION[onUpdate] ?? onUpdate,
      };
    }
  }
  return keys;
}

// ---------------------------------------------------------------------------------------------
// What the migrated database has
// ---------------------------------------------------------------------------------------------

const IN_SCHEMA = 'n.nspname = current_schema()';

async function actualTables(db: SqlDriver): Promise<string[]> {
  const rows = await db.query<{ name: string }>(`
    SELECT c.relname::text AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE ${IN_SCHEMA} AND c.relkind IN ('r', 'p') AND c.relname <> '${MIGRATIONS_TABLE}'`);
  return rows.map((r) => r.name).sort();
}

async function actualColumns(db: SqlDriver, table: string): Promise<Record<string, Column>> {
  const rows = await db.query<{ name: string; type: string; not_null: boolean; default: string | null }>(
    `SELECT a.attname::text AS name, format_type(a.atttypid, a.atttypmod) AS type,
            a.attnotnull AS not_null, pg_get_expr(d.adbin, d.adrelid) AS default
     FROM pg_attribute a
     JOIN pg_class c ON c.oid = a.attrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE ${IN_SCHEMA} AND c.relname = $1 AND a.attnum > 0 AND NOT a.attisdropped`,
    [table],
  );
  return Object.fromEntries(
    rows.map((r) => [r.name, { type: r.type, notNull: r.not_null, default: r.default }]),
  );
}

async function actualIndexes(db: SqlDriver): Promise<Record<string, Index>> {
  const rows = await db.query<{
    name: string;
    table: string;
    unique: boolean;
    primary: boolean;
    method: string;
    columns: string;
  }>(`
    SELECT i.relname::text AS name, t.relname::text AS table, ix.indisunique AS unique, ix.indisprimary AS primary,
           am.amname::text AS method,
           string_agg(
             a.attname::text || CASE WHEN (ix.indoption[k.ord - 1] & 1) = 1 THEN ' DESC' ELSE ' ASC' END,
             ', ' ORDER BY k.ord) AS columns
    FROM pg_index ix
    JOIN pg_class i ON i.oid = ix.indexrelid
    JOIN pg_class t ON t.oid = ix.indrelid
    JOIN pg_am am ON am.oid = i.relam
    JOIN pg_namespace n ON n.oid = t.relnamespace
    CROSS JOIN LATERAL unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
    JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
    WHERE ${IN_SCHEMA} AND t.relname <> '${MIGRATIONS_TABLE}'
    GROUP BY i.relname, t.relname, ix.indisunique, ix.indisprimary, am.amname`);
  return Object.fromEntries(
    rows.map((r) => [
      r.name,
      { table: r.table, unique: r.unique, primary: r.primary, method: r.method, columns: r.columns },
    ]),
  );
}

async function actualForeignKeys(db: SqlDriver): Promise<Record<string, ForeignKey>> {
  const columnsOf = (keys: string, rel: string) => `(
    SELECT string_agg(a.attname::text, ', ' ORDER BY k.ord)
    FROM unnest(c.${keys}) WITH ORDINALITY AS k(attnum, ord)
    JOIN pg_attribute a ON a.attrelid = c.${rel} AND a.attnum = k.attnum)`;
  const rows = await db.query<ForeignKey & { name: string }>(`
    SELECT c.conname::text AS name, t.relname::text AS table, r.relname::text AS "refTable",
           ${columnsOf('conkey', 'conrelid')} AS columns, ${columnsOf('confkey', 'confrelid')} AS "refColumns",
           c.confdeltype::text AS "onDelete", c.confupdtype::text AS "onUpdate"
    FROM pg_constraint c
    JOIN pg_class t ON t.oid = c.conrelid
    JOIN pg_class r ON r.oid = c.confrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace
    WHERE ${IN_SCHEMA} AND c.contype = 'f'`);
  return Object.fromEntries(rows.map(({ name, ...key }) => [name, key]));
}

// ---------------------------------------------------------------------------------------------

describe('the migrated database', () => {
  it('is described by a DMMF generated from the current schema.prisma', () => {
    const source = readFileSync(schemaFile, 'utf8');
    const models = [...source.matchAll(/^model\s+(\w+)\s*\{([\s\S]*?)^\}/gm)].map(([, name, body]) => ({
      name,
      // Unsupported("…") fields are not in the DMMF (they are compared as columns below).
      fields: [...(body ?? '').matchAll(/^\s+(\w+)\s+(?!Unsupported\()\w/gm)].map(([, field]) => field),
    }));
    expect(models.length).toBeGreaterThan(0);
    expect(datamodel.models.map((m) => ({ name: m.name, fields: m.fields.map((f) => f.name) }))).toEqual(
      models,
    );
  });

  it('has a table for every model and no other', async () => {
    const expected = datamodel.models.map(tableOf).sort();
    expect(await actualTables(app.db.driver)).toEqual(expected);
  });

  it.each(datamodel.models.map((m) => [m.name, m] as const))(
    'has every column of %s with its type, nullability and default, and no other',
    async (_name, model) => {
      expect(await actualColumns(app.db.driver, tableOf(model))).toEqual(expectedColumns(model));
    },
  );

  it('has the primary keys, unique indexes and indexes of the schema, columns in order, and no others', async () => {
    expect(await actualIndexes(app.db.driver)).toEqual(expectedIndexes());
  });

  it('has the foreign keys of the schema with their ON DELETE and ON UPDATE actions, and no others', async () => {
    expect(await actualForeignKeys(app.db.driver)).toEqual(expectedForeignKeys());
  });

  it('covers every kind of column the schema uses', () => {
    const types = new Set(datamodel.models.flatMap((m) => scalarFields(m).map(sqlType)));
    for (const type of [
      'uuid',
      'text',
      'text[]',
      'timestamp(3) with time zone',
      'numeric(18,8)',
      'jsonb',
      'double precision',
      'integer',
      'boolean',
    ]) {
      expect(types).toContain(type);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The migrator
// ---------------------------------------------------------------------------------------------

/** A database of its own with nothing in it, closed and dropped after the file. */
const scratch: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const drop of scratch.reverse()) await drop();
});

async function emptyDatabase(): Promise<{ open(): Promise<SqlDriver> }> {
  if (!testDatabaseUrl) {
    const db = await openPglite('memory://');
    scratch.push(() => db.close());
    return { open: async () => db };
  }
  const url = testDatabaseUrl;
  const schema = `test_${randomUUID().replaceAll('-', '')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${schema}"`);
  await admin.end();
  const drivers: SqlDriver[] = [];
  scratch.push(async () => {
    for (const d of drivers) await d.close();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`DROP SCHEMA "${schema}" CASCADE`);
    await c.end();
  });
  return {
    // Each call is a separate pool: another process, as far as PostgreSQL can tell.
    open: async () => {
      const driver = await openPostgres(url, schema);
      drivers.push(driver);
      return driver;
    },
  };
}

async function copyOfMigrations(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-migrations-'));
  scratch.push(() => rm(dir, { recursive: true, force: true }));
  await cp(migrationsDir, dir, { recursive: true });
  return dir;
}

async function addMigration(dir: string, name: string, sql: string) {
  await mkdir(path.join(dir, name));
  await writeFile(path.join(dir, name, 'migration.sql'), sql);
}

async function recorded(db: SqlDriver): Promise<string[]> {
  const rows = await db.query<{ name: string }>(`SELECT name FROM "${MIGRATIONS_TABLE}" ORDER BY name`);
  return rows.map((r) => r.name);
}

/** Fails instead of hanging when a migrator waits on a lock that is never released. */
function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms)),
  ]);
}

describe('the migrator', () => {
  it('applies every migration to an empty database, in order, and records each', async () => {
    const names = (await readMigrations(migrationsDir)).map((m) => m.name);
    expect(names.length).toBeGreaterThan(0);
    const db = await (await emptyDatabase()).open();
    expect(await migrate(db, migrationsDir)).toEqual(names);
    expect(await recorded(db)).toEqual(names);
    expect(await actualTables(db)).toEqual(datamodel.models.map(tableOf).sort());
  });

  it('applies nothing the second time', async () => {
    expect(await migrate(app.db.driver, migrationsDir)).toEqual([]);
    const db = await (await emptyDatabase()).open();
    await migrate(db, migrationsDir);
    const before = await recorded(db);
    expect(await migrate(db, migrationsDir)).toEqual([]);
    expect(await recorded(db)).toEqual(before);
  });

  it('lets a second process migrate after the first has finished, without waiting on its lock', async () => {
    const database = await emptyDatabase();
    const first = await database.open();
    await within(10_000, migrate(first, migrationsDir));
    const second = await database.open();
    expect(await within(10_000, migrate(second, migrationsDir))).toEqual([]);
    expect(await within(10_000, migrate(first, migrationsDir))).toEqual([]);
  });

  it('applies only a migration added since the last run', async () => {
    const dir = await copyOfMigrations();
    const db = await (await emptyDatabase()).open();
    await migrate(db, dir);
    await addMigration(dir, '29991231000000_extra', 'CREATE TABLE "extra" ("id" INTEGER PRIMARY KEY);');
    expect(await migrate(db, dir)).toEqual(['29991231000000_extra']);
    expect(await db.query('SELECT * FROM "extra"')).toEqual([]);
    expect(await migrate(db, dir)).toEqual([]);
  });

  it('refuses to run when an applied migration has changed since, and applies nothing then', async () => {
    const dir = await copyOfMigrations();
    const db = await (await emptyDatabase()).open();
    await migrate(db, dir);
    const [first] = await readMigrations(dir);
    if (!first) throw new Error('no migration');
    await writeFile(path.join(dir, first.name, 'migration.sql'), `${first.sql}\n-- edited afterwards\n`);
    await addMigration(dir, '29991231000000_extra', 'CREATE TABLE "extra" ("id" INTEGER PRIMARY KEY);');
    await expect(migrate(db, dir)).rejects.toThrow(
      `Migration ${first.name} was changed after it was applied`,
    );
    expect(await recorded(db)).not.toContain('29991231000000_extra');
    expect(await actualTables(db)).not.toContain('extra');
  });

  it('leaves nothing of a migration that fails half-way, and records it not', async () => {
    const dir = await copyOfMigrations();
    const db = await (await emptyDatabase()).open();
    await migrate(db, dir);
    await addMigration(
      dir,
      '29991231000000_broken',
      'CREATE TABLE "half" ("id" INTEGER PRIMARY KEY);\nALTER TABLE "no_such_table" ADD COLUMN "x" INTEGER;',
    );
    await expect(migrate(db, dir)).rejects.toThrow();
    expect(await actualTables(db)).not.toContain('half');
    expect(await recorded(db)).not.toContain('29991231000000_broken');
    // And the database is still usable by the next run.
    await rm(path.join(dir, '29991231000000_broken'), { recursive: true });
    expect(await within(10_000, migrate(db, dir))).toEqual([]);
  });
});
