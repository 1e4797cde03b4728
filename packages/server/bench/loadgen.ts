/**
 * Open-loop load at a fixed rate: requests start on schedule whatever the answers do, so a slow
 * server shows as latency rather than as fewer requests (no coordinated omission). Runs in its
 * own process; prints JSON {sent, ok, errors, p50, p99, mean} in milliseconds.
 *
 * It speaks HTTP/1.1 over keep-alive sockets itself, sending one prepared request and reading
 * only the status line and the body's length: it shares the machine's cores with the server it
 * measures, and an HTTP client library cost several times more CPU per request, taken from the
 * server under test (wrk2 does the same in C; Debian does not package it).
 *
 * The first WARMUP_SECONDS run at the same rate but are not measured: they open this client's
 * connections and warm its own code, which would otherwise show as the server's latency (wrk2
 * calibrates the same way).
 */
import net from 'node:net';

const [url, rateArg, secondsArg, headersArg, body = ''] = process.argv.slice(2);
const target = new URL(url as string);
const rate = Number(rateArg);
const seconds = Number(secondsArg);
const headers = JSON.parse(headersArg ?? '{}') as Record<string, string>;

const request = Buffer.from(
  [
    `POST ${target.pathname}${target.search} HTTP/1.1`,
    `host: ${target.host}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    `content-length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n'),
);

type Pending = { t0: number; measured: boolean; retried: boolean };
type Conn = {
  socket: net.Socket;
  pending: Pending | null;
  buffer: Buffer;
  need: number;
  status: number;
  /** When it went idle: the server closes keep-alive connections idle for 5 s. */
  idleSince: number;
  /** The server said Connection: close, or the connection failed: never reused. */
  done: boolean;
};

const MAX_CONNECTIONS = 512;
const IDLE_REUSE_MS = 4000;
const idle: Conn[] = [];
let open = 0;
const queue: Pending[] = [];

const WARMUP_SECONDS = 2;
const latencies: number[] = [];
let ok = 0;
let errors = 0;
let finished = 0;

function done(p: Pending, status: number) {
  finished++;
  if (!p.measured) return;
  if (status === 200) ok++;
  else errors++;
  latencies.push(performance.now() - p.t0);
}

/** Parses what has arrived; answers the request once its whole body is in. */
function onData(conn: Conn, chunk: Buffer) {
  conn.buffer = conn.buffer.length === 0 ? chunk : Buffer.concat([conn.buffer, chunk]);
  if (conn.need < 0) {
    const end = conn.buffer.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = conn.buffer.toString('latin1', 0, end);
    conn.status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (!length) {
      // Only answers with a length are read (every route measured sends one): count it failed.
      conn.done = true;
      conn.socket.destroy();
      return;
    }
    if (/\r\nconnection:\s*close/i.test(head)) conn.done = true;
    conn.need = end + 4 + Number(length[1]);
  }
  if (conn.buffer.length < conn.need) return;
  const p = conn.pending as Pending;
  conn.pending = null;
  conn.buffer = conn.buffer.subarray(conn.need);
  conn.need = -1;
  done(p, conn.status);
  if (conn.done) conn.socket.destroy();
  else release(conn);
}

function release(conn: Conn) {
  const next = queue.shift();
  if (next) send(conn, next);
  else {
    conn.idleSince = performance.now();
    idle.push(conn);
  }
}

function send(conn: Conn, p: Pending) {
  conn.pending = p;
  conn.socket.write(request);
}

function connect(first: Pending) {
  open++;
  const socket = net.connect(Number(target.port), target.hostname);
  socket.setNoDelay(true);
  const conn: Conn = {
    socket,
    pending: first,
    buffer: Buffer.alloc(0),
    need: -1,
    status: 0,
    idleSince: 0,
    done: false,
  };
  socket.on('connect', () => socket.write(request));
  socket.on('data', (chunk: Buffer) => onData(conn, chunk));
  socket.on('error', () => {});
  socket.on('close', () => {
    open--;
    const i = idle.indexOf(conn);
    if (i >= 0) idle.splice(i, 1);
    const p = conn.pending;
    conn.pending = null;
    if (p) {
      // Closed before any of its answer came (a keep-alive connection the server had just
      // closed): sent again once on a new connection; otherwise it failed.
      if (!p.retried && conn.buffer.length === 0 && conn.need < 0) start({ ...p, retried: true });
      else {
        finished++;
        if (p.measured) errors++;
      }
    }
    // Requests waiting for a free connection get one now there is room.
    while (queue.length > 0 && open < MAX_CONNECTIONS) connect(queue.shift() as Pending);
  });
}

function start(p: Pending) {
  let conn = idle.pop();
  // Connections idle long enough for the server to close them are not reused.
  while (conn && performance.now() - conn.idleSince > IDLE_REUSE_MS) {
    conn.socket.destroy();
    conn = idle.pop();
  }
  if (conn) send(conn, p);
  else if (open < MAX_CONNECTIONS) connect(p);
  else queue.push(p);
}

const warmup = Math.round(rate * WARMUP_SECONDS);
const total = warmup + Math.round(rate * seconds);
const interval = 1000 / rate;
const begin = performance.now();

for (let i = 0; i < total; i++) {
  const due = begin + i * interval;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  // Measured from when it should have started, so a late start counts as latency (no coordinated
  // omission); a timer that fired early is measured from the real start.
  start({ t0: Math.min(due, performance.now()), measured: i >= warmup, retried: false });
}
while (finished < total) await new Promise((r) => setTimeout(r, 5));
for (const conn of idle) conn.socket.destroy();

latencies.sort((a, b) => a - b);
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
console.log(
  JSON.stringify({
    sent: total - warmup,
    ok,
    errors,
    p50: at(0.5),
    p99: at(0.99),
    mean: latencies.reduce((a, b) => a + b, 0) / (latencies.length || 1),
  }),
);
