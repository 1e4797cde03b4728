// The embedded database's own thread. PGlite is PostgreSQL compiled to WebAssembly: every
// statement runs synchronously on the thread that calls it. Here it runs beside the request
// thread instead of on it, so a batch of log entries being written never holds up a request.
// Plain JavaScript, so it starts the same under tsx, vitest and the built server.
// The other side of the conversation is pgliteThread.ts; messages are {id, op, ...}.
// The same file also runs as a child process (forked, with the data directory and options as its
// argument), for work whose memory must leave with it: a new data directory's initdb.
import { writeFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { messages, PGlite } from '@electric-sql/pglite';

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
    case 'batch':
      await db.transaction(async (tx) => {
        for (const statement of msg.statements) await tx.query(statement.sql, statement.params);
      });
      return null;
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
