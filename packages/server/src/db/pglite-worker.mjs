// The embedded database's own thread. PGlite is PostgreSQL compiled to WebAssembly: every
// statement runs synchronously on the thread that calls it. Here it runs beside the request
// thread instead of on it, so a batch of log entries being written never holds up a request.
// Plain JavaScript, so it starts the same under tsx, vitest and the built server.
// The other side of the conversation is pgliteThread.ts; messages are {id, op, ...}.
// The same file also runs as a child process (forked, with the data directory and options as its
// argument), for work whose memory must leave with it: a new data directory's initdb.
import { writeFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { messages, PGlite, parse, protocol } from '@electric-sql/pglite';

// On Linux the thread takes a name of its own, so `top -H` (and the benchmark's CPU figures) can
// tell the database's CPU from V8's and libuv's threads, which are all named after node.
if (parentPort) {
  try {
    writeFileSync('/proc/thread-self/comm', 'pglite');
  } catch {} // not Linux: the name is only a convenience
}

const port = parentPort ?? {
  postMessage: (message) => process.send(message),
  on: (event, listener) => process.on(event, listener),
};
// A forked process ends with its parent's channel, whatever the parent did.
if (!parentPort) process.on('disconnect', () => process.exit(0));
const { dataDir, options } = workerData ?? JSON.parse(process.argv[2]);
/** Open transactions by id: the tx handle and the function that lets its callback return. */
const transactions = new Map();
let nextTransaction = 1;

const raw = (value) => value;

function errorOf(error) {
  // Structured clone would drop the class and keep only message and stack: send every field.
  const fields = { ...error };
  delete fields.query;
  delete fields.params;
  delete fields.queryOptions;
  return {
    message: error?.message ?? String(error),
    database: error instanceof messages.DatabaseError,
    length: error?.length ?? 0,
    name: error?.name ?? 'error',
    fields,
  };
}

function queryOptions(msg) {
  if (!msg.rowMode && !msg.rawTypes) return undefined;
  const opts = {};
  if (msg.rowMode) opts.rowMode = msg.rowMode;
  // Types the caller parses itself (with functions, which cannot cross threads) come back as text.
  if (msg.rawTypes) opts.parsers = Object.fromEntries(msg.rawTypes.map((oid) => [oid, raw]));
  return opts;
}

function target(msg) {
  if (msg.tx === undefined) return db;
  const open = transactions.get(msg.tx);
  if (!open) throw new Error(`transaction ${msg.tx} is not open`);
  return open.handle;
}

/**
 * Statements as one message of PostgreSQL's extended protocol, built here: Bind and Execute for
 * each (every parameter as text, its type the statement's), then one Sync. The log writer's
 * batch (issue 30) is one large JSON text: PGlite's own serializer measured its length in a
 * JavaScript loop and copied it through growing buffers, a fifth of this thread's time; here its
 * bytes are written once, and a statement costs one call into the database instead of five.
 * Each statement text is parsed once for the thread's life, as a named prepared statement
 * (`prepared`): a batch's statements cost PostgreSQL their parse, analysis and (after five runs,
 * once its generic plan serves) planning only the first time. A statement that fails ends the
 * message (the server skips to the Sync) and the batch's transaction rolls back. Null when a
 * parameter has no text form here (textOf): such a batch goes statement by statement through
 * PGlite's query.
 */
function batchMessage(statements, parsing) {
  const texts = [];
  let size = 5;
  for (const { sql, params } of statements) {
    const values = [];
    for (const p of params) {
      const text = textOf(p);
      if (text === undefined) {
        parsing.clear();
        return null;
      }
      values.push(text);
    }
    // A text already prepared is bound again; so is one this batch prepares further up.
    let name = prepared.get(sql) ?? parsing.get(sql);
    const parse = name === undefined;
    if (name === undefined) {
      // A name never given before: two batches in flight at once never share one.
      name = `gatehouse_batch_${nextStatement++}`;
      parsing.set(sql, name);
    }
    const sqlBytes = parse ? Buffer.byteLength(sql) : 0;
    const lengths = values.map((v) => (v === null ? -1 : Buffer.byteLength(v)));
    const valueBytes = lengths.reduce((n, l) => n + 4 + Math.max(l, 0), 0);
    // Parse: 'P' len name\0 sql\0 int16; Bind: 'B' len "" name\0 int16 int16 (int32 bytes)* int16;
    // Execute: 'E' len "" int32. Names are ASCII.
    if (parse) size += 1 + 4 + name.length + 1 + sqlBytes + 1 + 2;
    size += 1 + 4 + 1 + name.length + 1 + 2 + 2 + valueBytes + 2;
    size += 1 + 4 + 1 + 4;
    texts.push({ sql, name, parse, sqlBytes, values, lengths, valueBytes });
  }
  const out = Buffer.allocUnsafeSlow(size);
  let at = 0;
  const head = (code, length) => {
    out[at] = code;
    out.writeInt32BE(length, at + 1);
    at += 5;
  };
  const cString = (text) => {
    at += out.write(text, at);
    out[at++] = 0;
  };
  for (const { sql, name, parse, sqlBytes, values, lengths, valueBytes } of texts) {
    if (parse) {
      head(0x50, 4 + name.length + 1 + sqlBytes + 1 + 2); // Parse
      cString(name);
      cString(sql);
      at = out.writeInt16BE(0, at);
    }
    head(0x42, 4 + 1 + name.length + 1 + 2 + 2 + valueBytes + 2); // Bind
    out[at++] = 0;
    cString(name);
    at = out.writeInt16BE(0, at);
    at = out.writeInt16BE(values.length, at);
    values.forEach((v, i) => {
      at = out.writeInt32BE(lengths[i], at);
      if (v !== null) at += out.write(v, at);
    });
    at = out.writeInt16BE(0, at);
    head(0x45, 4 + 1 + 4); // Execute
    out[at++] = 0;
    at = out.writeInt32BE(0, at);
  }
  head(0x53, 4); // Sync
  if (at !== size) throw new Error(`batch message: wrote ${at} bytes of ${size}`);
  return out;
}

/** Named prepared statements of batches, by statement text (batchMessage). */
const prepared = new Map();
let nextStatement = 0;

/**
 * Closes statements a failed batch may have prepared before its error: the server keeps those it
 * parsed, and a later Parse under the same name would fail. Closing one it never made is no error.
 */
async function forget(names) {
  const closes = names.map((name) => {
    const message = Buffer.alloc(1 + 4 + 1 + name.length + 1);
    message[0] = 0x43; // Close
    message.writeInt32BE(message.length - 1, 1);
    message[5] = 0x53; // a statement
    message.write(name, 6);
    return message;
  });
  const sync = Buffer.from([0x53, 0, 0, 0, 4]);
  await db.runExclusive(() => db.execProtocolStream(Buffer.concat([...closes, sync]), { syncToFs: false }));
}

/**
 * Sleeps this thread for 50 µs between a batch's statements (still in its transaction: no other
 * message is read meanwhile). A running thread keeps its core for a slice before a thread just
 * woken (a request's, its client's, its upstream's) may have it; asleep, it gives the core up at
 * once. The log writer cuts a batch into statements of a few entries for this (logWriter.ts).
 */
const sleeping = new Int32Array(new SharedArrayBuffer(4));
const pause = () => Atomics.wait(sleeping, 0, 0, 0.05);

/**
 * A parameter in PostgreSQL's text format, as the statement's own casts read it; undefined for
 * one that has none here (bytes, an object, an array of arrays): such a query goes through
 * PGlite's query, which asks the server for the parameters' types first.
 */
function textOf(value) {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean')
    return String(value);
  if (value instanceof Date) return value.toISOString();
  if (!Array.isArray(value)) return undefined;
  const items = [];
  for (const item of value) {
    if (Array.isArray(item)) return undefined;
    const text = textOf(item);
    if (text === undefined) return undefined;
    items.push(text === null ? 'NULL' : `"${text.replace(/["\\]/g, '\\$&')}"`);
  }
  return `{${items.join(',')}}`;
}

/** Named prepared statements of queries asked to be prepared, by statement text. */
const preparedQueries = new Map();

/**
 * A query that runs on every request (a key's or a session's counter), as a named prepared
 * statement: parsed and planned once for the thread's life, then Bind, Describe, Execute and
 * Sync in one call into the database. PGlite's own query parses and plans it every time and
 * calls into the database five times: a key's counter statement cost ~1.1-1.6 ms so, planning
 * ~1 ms of it. Null when a parameter has no text form here (textOf).
 */
async function preparedQuery(sql, params) {
  const values = [];
  for (const p of params) {
    const text = textOf(p);
    if (text === undefined) return null;
    values.push(text);
  }
  // As PGlite's query: a database closing or closed refuses, saying so.
  await db._checkReady();
  let name = preparedQueries.get(sql);
  const parsing = name === undefined;
  if (parsing) name = `gatehouse_query_${nextStatement++}`;
  const { serialize } = protocol;
  const parts = [
    ...(parsing ? [serialize.parse({ name, text: sql })] : []),
    serialize.bind({ statement: name, values }),
    serialize.describe({ type: 'P' }),
    serialize.execute({}),
    serialize.sync(),
  ];
  const message = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  parts.reduce((at, part) => {
    message.set(part, at);
    return at + part.length;
  }, 0);
  try {
    // As PGlite's query does: after any transaction another caller has open, alone on the
    // database, and its files synced after.
    const { messages: replies } = await db._runExclusiveTransaction(() =>
      db.runExclusive(async () => {
        const result = await db.execProtocol(message, { syncToFs: false });
        await db.syncToFs();
        return result;
      }),
    );
    if (parsing) preparedQueries.set(sql, name);
    return parse.parseResults(replies, db.parsers)[0];
  } catch (error) {
    if (parsing) await forget([name]).catch(() => {});
    throw error;
  }
}

/** Marks an operation whose answer is sent from elsewhere. */
const NO_REPLY = Symbol('no reply');
let db;

/** Opens a transaction and answers with its id from inside it; it stays open until commit or rollback. */
function begin(id) {
  const tx = nextTransaction++;
  const open = { handle: null, release: null, done: null };
  const released = new Promise((resolve) => {
    open.release = resolve;
  });
  let answered = false;
  open.done = db.transaction(async (handle) => {
    open.handle = handle;
    transactions.set(tx, open);
    answered = true;
    port.postMessage({ id, ok: true, result: tx });
    await released;
  });
  open.done.catch((error) => {
    if (!answered) port.postMessage({ id, ok: false, error: errorOf(error) });
  });
}

async function end(msg) {
  const open = transactions.get(msg.tx);
  if (!open) throw new Error(`transaction ${msg.tx} is not open`);
  transactions.delete(msg.tx);
  if (msg.op === 'rollback' && !open.handle.closed) await open.handle.rollback();
  open.release();
  await open.done;
  return null;
}

async function handle(msg) {
  switch (msg.op) {
    case 'query':
      return target(msg).query(msg.sql, msg.params, queryOptions(msg));
    case 'exec':
      return target(msg).exec(msg.sql, queryOptions(msg));
    case 'prepared':
      return (await preparedQuery(msg.sql, msg.params)) ?? db.query(msg.sql, msg.params);
    case 'batch': {
      const parsing = new Map();
      const messages = [];
      for (const statement of msg.statements) {
        const message = batchMessage([statement], parsing);
        if (!message) break;
        messages.push(message);
      }
      const built = messages.length === msg.statements.length;
      if (!built) parsing.clear(); // none of those names is sent
      try {
        await db.transaction(async (tx) => {
          if (!built) {
            for (const statement of msg.statements) await tx.query(statement.sql, statement.params);
            return;
          }
          for (let i = 0; i < messages.length; i++) {
            if (i > 0) pause();
            await db.runExclusive(() => db.execProtocolStream(messages[i], { syncToFs: false }));
          }
        });
      } catch (error) {
        // The batch's own error is what the caller sorts failures by, not this cleanup's.
        if (parsing.size > 0) await forget([...parsing.values()]).catch(() => {});
        throw error;
      }
      for (const [sql, name] of parsing) prepared.set(sql, name);
      return null;
    }
    case 'begin':
      begin(msg.id);
      return NO_REPLY;
    case 'commit':
    case 'rollback':
      return end(msg);
    case 'close':
      await db.close();
      return null;
    default:
      throw new Error(`unknown operation ${msg.op}`);
  }
}

try {
  db = await PGlite.create(dataDir, options);
  port.postMessage({ ready: true });
} catch (error) {
  port.postMessage({ ready: false, error: errorOf(error) });
}

port.on('message', (msg) => {
  handle(msg).then(
    (result) => {
      if (result !== NO_REPLY) port.postMessage({ id: msg.id, ok: true, result });
    },
    (error) => port.postMessage({ id: msg.id, ok: false, error: errorOf(error) }),
  );
});
