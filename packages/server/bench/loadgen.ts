/**
 * Open-loop load at a fixed rate: requests start on schedule whatever the answers do, so a slow
 * server shows as latency rather than as fewer requests (no coordinated omission). Runs in its
 * own process; prints JSON {sent, ok, errors, p50, p99, mean} in milliseconds.
 *
 * The first WARMUP_SECONDS run at the same rate but are not measured: they open this client's
 * connections and warm its own code, which would otherwise show as the server's latency (wrk2
 * calibrates the same way).
 */
import { Agent, request } from 'undici';

const [url, rateArg, secondsArg, headersArg, body] = process.argv.slice(2);
const rate = Number(rateArg);
const seconds = Number(secondsArg);
const headers = JSON.parse(headersArg ?? '{}') as Record<string, string>;
const agent = new Agent({ connections: 256, keepAliveTimeout: 60_000 });

const WARMUP_SECONDS = 2;
const latencies: number[] = [];
let ok = 0;
let errors = 0;
const warmup = Math.round(rate * WARMUP_SECONDS);
const total = warmup + Math.round(rate * seconds);
const interval = 1000 / rate;
const start = performance.now();
const inflight: Promise<void>[] = [];

for (let i = 0; i < total; i++) {
  const due = start + i * interval;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  // Measured from when it should have started, so a late start counts as latency (no coordinated
  // omission); a timer that fired early is measured from the real start.
  const t0 = Math.min(due, performance.now());
  inflight.push(
    request(url as string, { method: 'POST', headers, body: body as string, dispatcher: agent })
      .then(async (res) => {
        await res.body.text();
        if (i < warmup) return;
        if (res.statusCode === 200) ok++;
        else errors++;
        latencies.push(performance.now() - t0);
      })
      .catch(() => {
        if (i >= warmup) errors++;
      }),
  );
}
await Promise.all(inflight);
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
await agent.close();
