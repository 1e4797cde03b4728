/**
 * The embedded database on a thread of its own (pglite-worker.mjs), behind the part of PGlite's
 * interface that this server and Prisma's PGlite adapter use: query, exec, transaction, close.
 *
 * PGlite runs each statement synchronously on the thread that calls it; on the request thread a
 * batch of log entries held every request up for its whole duration. Here the statements run on
 * the other core while requests go on.
 */
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { messages, type PGlite, type PGliteOptions, type Results } from '@electric-sql/pglite';

type ParserMap = Record<number, (value: string, typeId: number) => unknown>;
type QueryOptions = { rowMode?: 'array' | 'object'; parsers?: ParserMap };
type WireError = {
  message: string;
  database: boolean;
  length: number;
  name: string;
  fields: Record<string, unknown>;
};
type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: WireError };

function toError(wire: WireError, sql?: string): Error {
  const error = wire.database
    ? new messages.DatabaseError(wire.message, wire.length, wire.name as 'error')
    : new Error(wire.message);
  Object.assign(error, wire.fields, sql === undefined ? {} : { query: sql });
  return error;
}

/**
 * Applies the caller's own parsers on this side: the worker returned those types as text, since
 * functions cannot cross threads.
 */
function parse<T>(results: Results<T>, parsers: ParserMap | undefined, rowMode: string | undefined) {
  if (!parsers) return results;
  const columns = results.fields
    .map((field, index) => ({
      index,
      name: field.name,
      type: field.dataTypeID,
      parser: parsers[field.dataTypeID],
    }))
    .filter((c) => c.parser !== undefined);
  if (columns.length === 0) return results;
  for (const row of results.rows as unknown as Record<string | number, unknown>[]) {
    for (const c of columns) {
      const key = rowMode === 'array' ? c.index : c.name;
      const value = row[key];
      if (value !== null && value !== undefined) row[key] = c.parser?.(value as string, c.type);
    }
  }
  return results;
}

export type PGliteThread = Pick<PGlite, 'query' | 'exec' | 'transaction' | 'close'> & {
  /** Runs the statements in one transaction inside the database thread: no round trip between them. */
  batch(statements: { sql: string; params: unknown[] }[]): Promise<void>;
  /** A statement run on every request, from a constant text: parsed and planned once for the thread's life. */
  prepared<T>(sql: string, params: unknown[]): Promise<Results<T>>;
};

/** A data directory PGlite has not created yet (in memory, it is created every time). */
export const isNewDataDir = (dataDir: string) =>
  !dataDir.includes('://') && !existsSync(path.join(dataDir, 'PG_VERSION'));

/** What the conversation needs of a thread or a child process. */
type Listener = Parameters<Worker['on']>[1];
type Peer = {
  postMessage(message: unknown): void;
  on(event: string, listener: Listener): unknown;
  once(event: string, listener: Listener): unknown;
  off(event: string, listener: Listener): unknown;
  terminate(): Promise<unknown>;
};

const WORKER = new URL('./pglite-worker.mjs', import.meta.url);
/** The database thread's JavaScript is little more than messages in and out (V8's default: 48 MB). */
const YOUNG_GENERATION_MB = 8;

/**
 * A process started with --cpu-prof (bench:profile) profiles the database thread too: the flag,
 * its directory and its interval, each with its value (`--cpu-prof-dir x` or `=x`); not its file
 * name, which would be both threads' and keep only one profile.
 */
export function profilingArgs(execArgv: readonly string[]): string[] {
  const args: string[] = [];
  execArgv.forEach((arg, i) => {
    if (arg === '--cpu-prof') args.push(arg);
    const equals = arg.indexOf('=');
    const name = equals < 0 ? arg : arg.slice(0, equals);
    if (name !== '--cpu-prof-dir' && name !== '--cpu-prof-interval') return;
    const given = equals < 0 ? execArgv[i + 1] : arg.slice(equals + 1);
    if (given !== undefined) args.push(`${name}=${given}`);
  });
  return args;
}

function startPeer(dataDir: string, options: PGliteOptions, inProcess: boolean): Peer {
  // The worker is plain JavaScript: it needs none of the parent's loaders (tsx).
  if (inProcess)
    return new Worker(WORKER, {
      workerData: { dataDir, options },
      execArgv: profilingArgs(process.execArgv),
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
  // The child runs initdb and the migrations once: V8's optimising compiler, let loose on
  // PostgreSQL's largest functions there, took its peak from ~550 to ~1,050 MB on Node 24 (~610
  // to ~690 on Node 20) and did not make it ready sooner (3.2 against 3.4-3.7 s). Only the first
  // function of each module may be optimised (--wasm-tier-up-filter: V8 has no plain off switch).
  const child = fork(fileURLToPath(WORKER), [JSON.stringify({ dataDir, options })], {
    execArgv: ['--wasm-tier-up-filter=0'],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return {
    postMessage: (message) => {
      child.send(message as never);
    },
    on: (event, listener) => child.on(event, listener),
    once: (event, listener) => child.once(event, listener),
    off: (event, listener) => child.off(event, listener),
    terminate: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await exited;
    },
  };
}

/**
 * The database on a thread of this process, or with `process: true` in a child process of its own
 * (what it allocated leaves with it: a new directory's initdb grows PGlite's memory for good).
 */
export async function openPgliteThread(
  dataDir: string,
  options: PGliteOptions,
  where: { process?: boolean } = {},
): Promise<PGliteThread> {
  const worker = startPeer(dataDir, options, where.process !== true);
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void; sql?: string }>();
  let nextId = 1;
  let exited: Error | null = null;

  let onReady!: (m: { ready: boolean; error?: WireError }) => void;
  let onError!: (error: Error) => void;
  let onExit!: (code: number) => void;
  try {
    await new Promise<void>((resolve, reject) => {
      onReady = (m) => (m.ready ? resolve() : reject(toError(m.error as WireError)));
      onError = reject;
      onExit = (code) => reject(new Error(`the database thread exited (code ${code}) while opening`));
      worker.once('message', onReady);
      worker.once('error', onError);
      worker.once('exit', onExit);
    });
  } catch (error) {
    await worker.terminate();
    throw error;
  } finally {
    worker.off('message', onReady);
    worker.off('error', onError);
    worker.off('exit', onExit);
  }
  worker.on('message', (reply: Reply) => {
    const call = waiting.get(reply.id);
    if (!call) return;
    waiting.delete(reply.id);
    if (reply.ok) call.resolve(reply.result);
    else call.reject(toError(reply.error, call.sql));
  });
  let closing = false;
  const fail = (error: Error) => {
    exited = error;
    for (const call of waiting.values()) call.reject(error);
    waiting.clear();
    // The database is gone for good (PGlite does not survive its thread): stop, so that a
    // supervisor restarts the process rather than it answering 500 to everything.
    if (!closing) {
      console.error('the embedded database stopped; exiting', error);
      process.exitCode = 1;
      setImmediate(() => process.exit(1));
    }
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the database thread exited (code ${code})`)));

  function call<T>(op: string, fields: Record<string, unknown> = {}): Promise<T> {
    if (exited) return Promise.reject(exited);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject, sql: fields.sql as string });
      try {
        worker.postMessage({ id, op, ...fields });
      } catch (error) {
        // A value that cannot cross threads (a function, say): this call fails, nothing waits on it.
        waiting.delete(id);
        reject(error);
      }
    });
  }

  const queryFields = (options: QueryOptions | undefined, tx: number | undefined) => ({
    ...(tx !== undefined && { tx }),
    ...(options?.rowMode && { rowMode: options.rowMode }),
    ...(options?.parsers && { rawTypes: Object.keys(options.parsers).map(Number) }),
  });

  const queryOn =
    (tx?: number) =>
    async <T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>> => {
      const results = await call<Results<T>>('query', {
        sql,
        params: params ?? [],
        ...queryFields(options, tx),
      });
      return parse(results, options?.parsers, options?.rowMode);
    };
  const execOn =
    (tx?: number) =>
    async (sql: string, options?: QueryOptions): Promise<Results[]> => {
      const results = await call<Results[]>('exec', { sql, ...queryFields(options, tx) });
      return results.map((r) => parse(r, options?.parsers, options?.rowMode));
    };

  return {
    query: queryOn() as PGlite['query'],
    exec: execOn() as PGlite['exec'],
    prepared: <T>(sql: string, params: unknown[]) => call<Results<T>>('prepared', { sql, params }),
    async transaction<T>(callback: Parameters<PGlite['transaction']>[0]): Promise<T> {
      const tx = await call<number>('begin');
      let ended: Promise<unknown> | null = null;
      const end = (op: 'commit' | 'rollback') => {
        ended ??= call(op, { tx });
        return ended;
      };
      const handle = {
        query: queryOn(tx),
        exec: execOn(tx),
        rollback: async () => {
          await end('rollback');
        },
        get closed() {
          return ended !== null;
        },
      };
      try {
        const result = (await callback(handle as never)) as T;
        await end('commit');
        return result;
      } catch (error) {
        await end('rollback').catch(() => {});
        throw error;
      }
    },
    async batch(statements) {
      await call('batch', { statements });
    },
    async close() {
      if (exited) return;
      closing = true;
      await call('close');
      await worker.terminate();
    },
  };
}
