/**
 * `pnpm bench:soak`: the built gateway on a new database (PGlite by default,
 * BENCH_SOAK_DATABASE=postgres for a new `gatehouse_bench_soak` on BENCH_POSTGRES_URL's server)
 * under BENCH_SOAK_RATE (500) requests a second for BENCH_SOAK_SECONDS (600), a mix of plain,
 * streamed, failing-then-fallback and block-limited requests. Prints the errors beyond those the
 * mix asks for, RSS and the event-loop delay's p99 every minute, and the log entries written
 * against the requests answered (counted in log_entries once the gateway has shut down, which
 * writes what is queued).
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import {
  buildServer,
  newDatabase,
  rssMb,
  setUp,
  sleep,
  startGateway,
  startUpstream,
  stop,
} from './harness.ts';
import { openLoop, type RequestKind } from './loadgen.ts';
import { FAILING_MODEL } from './upstream.ts';

const SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 600);
const RATE = Number(process.env.BENCH_SOAK_RATE ?? 500);
const DATABASE = (process.env.BENCH_SOAK_DATABASE ?? 'pglite') as 'pglite' | 'postgres';
const SAMPLE_SECONDS = Math.min(60, Math.max(5, Math.floor(SECONDS / 10)));
/** RSS may move by this much after the first two minutes and still count as no growth. */
const GROWTH_TOLERANCE_MB = 20;
/** Of the block-limited gate's requests, about this share should fit in its limit. */
const LIMITED_SHARE = 0.5;

const chat = (content: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });

async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
}

buildServer();
const db = await newDatabase(DATABASE, 'gatehouse_bench_soak');
if (!db) process.exit(1);
const upstream = await startUpstream();
const gateway = await startGateway(db, upstream.port);
let logEntries = Number.NaN;
let answered = 0;
try {
  const { headers, ids, auth } = await setUp(gateway.base, {
    plain: {
      model: 'openai/gpt-4o-mini',
      maxTokens: 16,
      spendingLimit: 1_000_000,
      spendingEnforcement: 'block',
    },
    fallback: {
      model: `openai/${FAILING_MODEL}`,
      fallbackModels: ['openai/gpt-4o-mini'],
      routingStrategy: 'fallback',
      maxTokens: 16,
    },
    limited: { model: 'openai/gpt-4o-mini', maxTokens: 16, spendingLimit: 1, spendingEnforcement: 'block' },
  });
  // What one request costs (its reservation is the worst case of 16 tokens out): the limited
  // gate's limit is set so that about LIMITED_SHARE of its requests fit, the rest are 402.
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`${gateway.base}/v1/chat/completions`, {
      method: 'POST',
      headers: headers.plain,
      body: chat('ping'),
    });
    if (!res.ok) throw new Error(`a calibration request answered ${res.status}: ${await res.text()}`);
    answered++;
  }
  const gate = (await (await fetch(`${gateway.base}/v1/gates/${ids.plain}`, { headers: auth })).json()) as {
    spendingCurrent: number;
  };
  const perRequest = gate.spendingCurrent / 20;
  const kinds: RequestKind[] = [
    {
      name: 'plain',
      weight: 4,
      headers: headers.plain as Record<string, string>,
      body: chat('ping'),
      expect: [200],
    },
    {
      name: 'streamed',
      weight: 2,
      headers: headers.plain as Record<string, string>,
      body: chat('chunks=20', { stream: true }),
      expect: [200],
    },
    {
      name: 'fallback, primary fails',
      weight: 1,
      headers: headers.fallback as Record<string, string>,
      body: chat('[fail]'),
      expect: [200],
    },
    {
      name: 'fallback, primary answers',
      weight: 1,
      headers: headers.fallback as Record<string, string>,
      body: chat('ping'),
      expect: [200],
    },
    {
      name: 'block-limited',
      weight: 2,
      headers: headers.limited as Record<string, string>,
      body: chat('ping'),
      expect: [200, 402],
    },
  ];
  const limitedRequests = (RATE * SECONDS * 2) / 10;
  const limit = Number((perRequest * limitedRequests * LIMITED_SHARE).toPrecision(3));
  const patched = await fetch(`${gateway.base}/v1/gates/${ids.limited}`, {
    method: 'PATCH',
    headers: auth,
    body: JSON.stringify({ spendingLimit: limit }),
  });
  if (!patched.ok) throw new Error(`setting the limited gate's limit failed: ${await patched.text()}`);

  console.log(
    `soak: ${RATE} req/s for ${SECONDS} s on ${db.label}: plain 40 %, streamed 20 %, fallback 20 % (half of them the primary fails), block-limited 20 % (limit $${limit}, about ${LIMITED_SHARE * 100} % of them fit)`,
  );
  console.log(`  ${'minute'.padStart(6)}  ${'RSS'.padStart(7)}  ${'loop p99'.padStart(9)}  answered`);
  const samples: { at: number; rss: number; loopP99: number }[] = [];
  const started = performance.now();
  let answeredSoFar = 0;
  const sampler = setInterval(async () => {
    const at = (performance.now() - started) / 1000;
    const rss = rssMb(gateway.pid);
    const loopP99 =
      (await metric(gateway.base, 'gatehouse_event_loop_delay_p99_seconds').catch(() => Number.NaN)) * 1000;
    samples.push({ at, rss, loopP99 });
    console.log(
      `  ${(at / 60).toFixed(1).padStart(6)}  ${`${rss.toFixed(0)} MB`.padStart(7)}  ${`${loopP99.toFixed(1)} ms`.padStart(9)}  ${answeredSoFar}`,
    );
  }, SAMPLE_SECONDS * 1000);
  const result = await openLoop({
    url: `${gateway.base}/v1/chat/completions`,
    rate: RATE,
    seconds: SECONDS,
    kinds,
    onSecond: (n) => {
      answeredSoFar = n;
    },
  });
  clearInterval(sampler);
  answered += result.answered;
  const written = await metric(gateway.base, 'gatehouse_log_entries_written_total');

  // Shutting down writes what is still queued; then the rows are counted in the database itself.
  await stop(gateway.child);
  if (db.url) {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    logEntries = Number((await client.query('SELECT count(*) AS n FROM log_entries')).rows[0].n);
    await client.end();
  } else {
    const local = await PGlite.create(db.dataDir);
    logEntries = Number(
      (await local.query<{ n: number }>('SELECT count(*)::int AS n FROM log_entries')).rows[0]?.n,
    );
    await local.close();
  }

  const afterTwo = samples.filter((s) => s.at >= 120 - 1);
  const base = afterTwo[0] ?? samples[0];
  const last = samples.at(-1);
  const growth = base && last ? last.rss - base.rss : Number.NaN;
  const loopP99 = Math.max(...samples.map((s) => s.loopP99).filter(Number.isFinite));
  const verdict = (ok: boolean) => (ok ? 'meets' : 'MISSES');
  console.log('');
  console.log(`Gatehouse soak: ${RATE} req/s for ${SECONDS} s on ${db.label}, ${new Date().toISOString()}`);
  for (const [name, k] of Object.entries(result.kinds)) {
    const statuses = Object.entries(k.statuses)
      .map(([status, n]) => `${status}: ${n}`)
      .join(', ');
    console.log(`  ${name.padEnd(26)} sent ${k.sent}, ${statuses}; errors ${k.errors}`);
  }
  console.log(`  errors beyond the mix's     ${result.errors} (target 0: ${verdict(result.errors === 0)})`);
  console.log(
    `  RSS growth after minute 2   ${growth.toFixed(0)} MB (${base?.rss.toFixed(0)} → ${last?.rss.toFixed(0)} MB; target none, within ${GROWTH_TOLERANCE_MB} MB: ${verdict(growth <= GROWTH_TOLERANCE_MB)})${SECONDS < 180 ? ' (a run under 3 minutes has no such period: from the first sample)' : ''}`,
  );
  console.log(
    `  log entries                 ${logEntries} in log_entries (the writer counted ${written} before shutdown) for ${answered} requests answered (target equal: ${verdict(logEntries === answered)})`,
  );
  console.log(
    `  event-loop delay p99        ${Number.isFinite(loopP99) ? `${loopP99.toFixed(1)} ms, the worst minute` : 'no whole minute measured (a run under a minute)'}`,
  );
  console.log(
    `  latency over the mix        p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms`,
  );
} finally {
  await stop(gateway.child);
  await stop(upstream.child);
  await sleep(100);
  await db.cleanup();
}
