/**
 * Open-loop load at a fixed rate: requests start on schedule whatever the answers do, so a slow
 * server shows as latency rather than as fewer requests (no coordinated omission).
 *
 * It speaks HTTP/1.1 over keep-alive sockets itself, sending prepared requests and reading only
 * the status line and where the body ends (its length, or a chunked body's last chunk): it shares
 * the machine's cores with the server it measures, and an HTTP client library cost several times
 * more CPU per request, taken from the server under test (wrk2 does the same in C; Debian does not
 * package it).
 *
 * The first WARMUP_SECONDS run at the same rate but are not measured: they open this client's
 * connections and warm its own code, which would otherwise show as the server's latency (wrk2
 * calibrates the same way).
 *
 * As a script (`loadgen.ts URL RATE SECONDS HEADERS_JSON BODY`) it runs in its own process and
 * prints JSON {sent, ok, errors, p50, p99, mean} in milliseconds; the soak imports `openLoop` to
 * send a mix of requests.
 */
import net from 'node:net';

export type RequestKind = {
  name: string;
  /** How many of each round of the mix are of this kind. */
  weight: number;
  headers: Record<string, string>;
  body: string;
  /** Statuses the mix asks for; any other is an error. */
  expect: number[];
};

export type KindResult = { sent: number; statuses: Record<number, number>; errors: number };

export type LoadResult = {
  sent: number;
  /** Requests that got an HTTP answer, the warm-up's included. */
  answered: number;
  ok: number;
  errors: number;
  p50: number;
  p99: number;
  mean: number;
  kinds: Record<string, KindResult>;
};

type Pending = { t0: number; measured: boolean; retried: boolean; kind: number };
type Conn = {
  socket: net.Socket;
  pending: Pending | null;
  buffer: Buffer;
  /** Where the answer ends: -1 before its head is in, -2 for a chunked body not yet ended. */
  need: number;
  /** Where to look for a chunked body's end (past what was searched already). */
  scanFrom: number;
  status: number;
  /** When it went idle: the server closes keep-alive connections idle for 5 s. */
  idleSince: number;
  /** The server said Connection: close, or the connection failed: never reused. */
  done: boolean;
};

const MAX_CONNECTIONS = 512;
const IDLE_REUSE_MS = 4000;
const WARMUP_SECONDS = 2;
const CHUNKED_END = Buffer.from('\r\n0\r\n\r\n');

function prepare(target: URL, kind: RequestKind): Buffer {
  return Buffer.from(
    [
      `POST ${target.pathname}${target.search} HTTP/1.1`,
      `host: ${target.host}`,
      ...Object.entries(kind.headers).map(([k, v]) => `${k}: ${v}`),
      `content-length: ${Buffer.byteLength(kind.body)}`,
      '',
      kind.body,
    ].join('\r\n'),
  );
}

/**
 * Sends `rate` requests a second for `seconds` (after the warm-up), the kinds interleaved by
 * weight; `onSecond` is called once a second with the requests answered so far.
 */
export async function openLoop(opts: {
  url: string;
  rate: number;
  seconds: number;
  kinds: RequestKind[];
  onSecond?: (answered: number) => void;
}): Promise<LoadResult> {
  const target = new URL(opts.url);
  const requests = opts.kinds.map((k) => prepare(target, k));
  const schedule = opts.kinds.flatMap((k, i) => Array.from({ length: k.weight }, () => i));
  const idle: Conn[] = [];
  let open = 0;
  const queue: Pending[] = [];
  const latencies: number[] = [];
  const kinds: Record<string, KindResult> = Object.fromEntries(
    opts.kinds.map((k) => [k.name, { sent: 0, statuses: {}, errors: 0 }]),
  );
  let ok = 0;
  let errors = 0;
  let finished = 0;
  let answered = 0;

  function done(p: Pending, status: number) {
    finished++;
    answered++;
    if (!p.measured) return;
    const kind = opts.kinds[p.kind] as RequestKind;
    const result = kinds[kind.name] as KindResult;
    result.statuses[status] = (result.statuses[status] ?? 0) + 1;
    if (kind.expect.includes(status)) ok++;
    else {
      errors++;
      result.errors++;
    }
    latencies.push(performance.now() - p.t0);
  }

  /** Parses what has arrived; answers the request once its whole body is in. */
  function onData(conn: Conn, chunk: Buffer) {
    conn.buffer = conn.buffer.length === 0 ? chunk : Buffer.concat([conn.buffer, chunk]);
    if (conn.need === -1) {
      const end = conn.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = conn.buffer.toString('latin1', 0, end);
      conn.status = Number(head.slice(9, 12));
      if (/\r\nconnection:\s*close/i.test(head)) conn.done = true;
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      if (length) conn.need = end + 4 + Number(length[1]);
      else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
        conn.need = -2;
        conn.scanFrom = end + 2;
      } else {
        // An answer that ends only when its connection closes: counted failed.
        conn.done = true;
        conn.socket.destroy();
        return;
      }
    }
    if (conn.need === -2) {
      const at = conn.buffer.indexOf(CHUNKED_END, conn.scanFrom);
      if (at < 0) {
        conn.scanFrom = Math.max(conn.scanFrom, conn.buffer.length - CHUNKED_END.length);
        return;
      }
      conn.need = at + CHUNKED_END.length;
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
    conn.socket.write(requests[p.kind] as Buffer);
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
      scanFrom: 0,
      status: 0,
      idleSince: 0,
      done: false,
    };
    socket.on('connect', () => socket.write(requests[first.kind] as Buffer));
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
        if (!p.retried && conn.buffer.length === 0 && conn.need === -1) start({ ...p, retried: true });
        else {
          finished++;
          if (p.measured) {
            errors++;
            (kinds[(opts.kinds[p.kind] as RequestKind).name] as KindResult).errors++;
          }
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

  const warmup = Math.round(opts.rate * WARMUP_SECONDS);
  const total = warmup + Math.round(opts.rate * opts.seconds);
  const interval = 1000 / opts.rate;
  const begin = performance.now();
  let nextSecond = begin + (WARMUP_SECONDS + 1) * 1000;

  for (let i = 0; i < total; i++) {
    const due = begin + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (opts.onSecond && performance.now() >= nextSecond) {
      nextSecond += 1000;
      opts.onSecond(finished);
    }
    const kind = schedule[i % schedule.length] as number;
    if (i >= warmup) (kinds[(opts.kinds[kind] as RequestKind).name] as KindResult).sent++;
    // Measured from when it should have started, so a late start counts as latency (no coordinated
    // omission); a timer that fired early is measured from the real start.
    start({ t0: Math.min(due, performance.now()), measured: i >= warmup, retried: false, kind });
  }
  while (finished < total) await new Promise((r) => setTimeout(r, 5));
  for (const conn of idle) conn.socket.destroy();

  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return {
    sent: total - warmup,
    answered,
    ok,
    errors,
    p50: at(0.5),
    p99: at(0.99),
    mean: latencies.reduce((a, b) => a + b, 0) / (latencies.length || 1),
    kinds,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [url, rateArg, secondsArg, headersArg, body = ''] = process.argv.slice(2);
  const result = await openLoop({
    url: url as string,
    rate: Number(rateArg),
    seconds: Number(secondsArg),
    kinds: [{ name: 'request', weight: 1, headers: JSON.parse(headersArg ?? '{}'), body, expect: [200] }],
  });
  const { kinds: _, answered: __, ...summary } = result;
  console.log(JSON.stringify(summary));
}
