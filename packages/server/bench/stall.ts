/**
 * `pnpm bench:stall`: does one client's worst-case input stall everyone else's requests? The
 * built gateway (as `pnpm start` runs it, on PGlite) in front of the bench upstream; one account
 * sends small chat requests and /healthz back to back (the probe) while another sends, once per
 * case, the costliest request each bound allows or refuses (issue 24, item 1). Printed per case:
 * the answer to that request, and the probe's worst latency while it ran against its worst in an
 * idle window as long. The target is at most 50 ms added.
 *
 *   BENCH_STALL_RUNS   how often each case runs (default 3; the median run is reported)
 */
import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { JSON_OBJECT_LIMITS, RESPONSE_SCHEMA_LIMITS } from '@gatehouse/rules/jsonLimits';
import { buildServer, newDatabase, setUp, sleep, startGateway, startUpstream, stop } from './harness.ts';

/** Each case runs this often; the median run is reported. */
const RUNS = Number(process.env.BENCH_STALL_RUNS ?? 3);
/** How long the probe runs around one case (and each idle window lasts). */
const WINDOW_MS = 1000;
const IDLE_WINDOWS = 9;
const TARGET_MS = 50;

/** An object schema of `count` string properties with fresh names, padded to about `bytes`. */
function schemaOf(count: number, bytes = 0) {
  const tag = randomUUID().slice(0, 8);
  const pad = Math.max(0, Math.floor((bytes - count * 40) / count));
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) properties[`f_${tag}_${i}_${'x'.repeat(pad)}`] = { type: 'string' };
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

/** The largest schema of that shape within RESPONSE_SCHEMA_LIMITS.maxMembers (3 members a property). */
const atBound = () => schemaOf(Math.floor((RESPONSE_SCHEMA_LIMITS.maxMembers - 4) / 3));

const jsonFormat = (schema: unknown) => ({ type: 'json_schema', json_schema: { name: 'answer', schema } });

function keysOf(count: number, numeric = false): Record<string, number> {
  const keys: Record<string, number> = {};
  for (let i = 0; i < count; i++) keys[numeric ? String(i) : `k${i}`] = i;
  return keys;
}

function multipart(fields: number, gateId: string): { body: Uint8Array<ArrayBuffer>; type: string } {
  const boundary = `----bench${randomUUID()}`;
  const parts = [`--${boundary}\r\nContent-Disposition: form-data; name="gateId"\r\n\r\n${gateId}\r\n`];
  for (let i = 0; i < fields; i++) {
    parts.push(`--${boundary}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nx\r\n`);
  }
  parts.push(`--${boundary}--\r\n`);
  return {
    body: new TextEncoder().encode(parts.join('')),
    type: `multipart/form-data; boundary=${boundary}`,
  };
}

type Probe = { stop(): Promise<number[]> };

/**
 * Small chat requests and /healthz, one after the other, until stopped: their latencies in ms.
 * Sent from a worker thread, so that building and sending a case's large body on this thread
 * never counts as the gateway's delay.
 */
function probe(base: string, headers: Record<string, string>): Probe {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads');
    const { base, headers } = workerData;
    const small = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] });
    const times = [];
    let running = true;
    parentPort.on('message', () => { running = false; });
    (async () => {
      for (let i = 0; running; i++) {
        const started = performance.now();
        const res = i % 2 === 0
          ? await fetch(base + '/v1/chat/completions', { method: 'POST', headers, body: small })
          : await fetch(base + '/healthz');
        await res.arrayBuffer();
        times.push(performance.now() - started);
        await new Promise((r) => setImmediate(r));
      }
      parentPort.postMessage(times);
    })();
    `,
    { eval: true, workerData: { base, headers } },
  );
  return {
    stop() {
      const done = new Promise<number[]>((resolve) => worker.once('message', resolve));
      worker.postMessage('stop');
      return done.finally(() => worker.terminate());
    },
  };
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)] ?? 0;

/** A case's request, built before the probe starts: `send` only sends it. */
type Case = { name: string; prepare(): () => Promise<Response> };

async function main() {
  buildServer();
  const upstream = await startUpstream();
  const db = await newDatabase('pglite', 'gh_bench_stall');
  if (!db) throw new Error('no database');
  const gateway = await startGateway(db, upstream.port);
  const { base } = gateway;
  try {
    const victim = await setUp(base, { small: { model: 'openai/gpt-4o-mini' } });
    // The PATCH cases change their own gate: a gate's schema would override the chat cases' own.
    const attacker = await setUp(base, {
      big: { model: 'openai/gpt-4o-mini' },
      patched: { model: 'openai/gpt-4o-mini' },
    });
    const gateId = attacker.ids.big as string;
    const headers = attacker.headers.big as Record<string, string>;
    /** A request whose body is built now, sent when the returned function is called. */
    const request = (path: string, init: RequestInit & { body: string | Uint8Array<ArrayBuffer> }) => {
      const body = init.body;
      return () => fetch(`${base}${path}`, { method: 'POST', ...init, body });
    };
    const chat = (extra: Record<string, unknown>) =>
      request('/v1/chat/completions', {
        headers,
        body: JSON.stringify({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'hello' }],
          ...extra,
        }),
      });
    const patch = (schema: unknown) =>
      request(`/v1/gates/${attacker.ids.patched}`, {
        method: 'PATCH',
        headers: attacker.auth,
        body: JSON.stringify({
          responseFormatEnabled: true,
          responseFormatType: 'json_schema',
          responseFormatSchema: schema,
        }),
      });
    const countTokens = (text: string) =>
      request('/v1/messages/count_tokens', {
        headers,
        body: JSON.stringify({ model: gateId, messages: [{ role: 'user', content: text }] }),
      });
    const cases: Case[] = [
      {
        name: 'PATCH gate: schema of 560 fresh properties, 64.9 KB',
        prepare: () => patch(schemaOf(560, 64_900)),
      },
      { name: 'PATCH gate: largest schema within the members bound', prepare: () => patch(atBound()) },
      {
        name: 'chat: response_format of 560 fresh properties, 64.9 KB',
        prepare: () => chat({ response_format: jsonFormat(schemaOf(560, 64_900)) }),
      },
      {
        name: 'chat: largest response_format within the members bound',
        prepare: () => chat({ response_format: jsonFormat(atBound()) }),
      },
      {
        name: '/v3/chat: metadata of 100,000 keys',
        prepare: () =>
          request('/v3/chat', {
            headers: attacker.auth,
            body: JSON.stringify({
              gateId,
              data: { messages: [{ role: 'user', content: 'hello' }] },
              metadata: keysOf(100_000),
            }),
          }),
      },
      {
        name: 'chat: metadata of 600,000 numeric keys',
        prepare: () => chat({ metadata: keysOf(600_000, true) }),
      },
      {
        name: `chat: metadata at its bound (${JSON_OBJECT_LIMITS.maxMetadataKeys} keys)`,
        prepare: () => chat({ metadata: keysOf(JSON_OBJECT_LIMITS.maxMetadataKeys) }),
      },
      {
        name: '/v3/stt: multipart of 100,000 fields',
        prepare: () => {
          const { body, type } = multipart(100_000, gateId);
          return request('/v3/stt', {
            headers: { authorization: attacker.auth.authorization as string, 'content-type': type },
            body,
          });
        },
      },
      {
        name: '/v1/messages/count_tokens: 3.6 MB of text',
        prepare: () => countTokens('lorem ipsum dolor sit amet '.repeat(133_000)),
      },
      {
        name: '/v1/messages/count_tokens: 3.6 MB of one word',
        prepare: () => countTokens('a'.repeat(3_600_000)),
      },
      {
        name: 'POST /v1/gates: a 9 MB body (refused, 1 MB limit)',
        prepare: () =>
          request('/v1/gates', {
            headers: attacker.auth,
            body: JSON.stringify({ name: 'x'.repeat(9_000_000) }),
          }),
      },
      {
        name: 'chat: a 12 MB body (refused, 10 MB limit)',
        prepare: () => chat({ messages: [{ role: 'user', content: 'x'.repeat(12_000_000) }] }),
      },
    ];

    const victimHeaders = victim.headers.small as Record<string, string>;
    // Warm what loads on first use (Ajv, the tokenizer's tables: a one-off ~250 ms, not a cost a
    // client's input can repeat; the gate change's path) and the probe's own before measuring.
    await chat({ response_format: jsonFormat(schemaOf(5)) })().then((r) => r.arrayBuffer());
    await countTokens('warm')().then((r) => r.arrayBuffer());
    await patch(schemaOf(5))().then((r) => r.arrayBuffer());
    const warm = probe(base, victimHeaders);
    await sleep(1000);
    await warm.stop();
    // The idle baseline: the probe's worst latency over windows as long as a case's, the median
    // window's (this machine is shared: a single window's worst is noise as often as not).
    const idleWorsts: number[] = [];
    const idleAll: number[] = [];
    for (let i = 0; i < IDLE_WINDOWS; i++) {
      const p = probe(base, victimHeaders);
      await sleep(WINDOW_MS);
      const times = await p.stop();
      idleAll.push(...times);
      idleWorsts.push(Math.max(...times));
    }
    const idleWorst = pct(idleWorsts, 0.5);
    console.log(
      `\nidle probe: ${idleAll.length} requests, p50 ${pct(idleAll, 0.5).toFixed(1)} ms, p99 ${pct(idleAll, 0.99).toFixed(1)} ms; worst in a ${WINDOW_MS} ms window: median ${idleWorst.toFixed(1)} ms (of ${IDLE_WINDOWS})\n`,
    );
    console.log(
      `${'case'.padEnd(58)} ${'answer'.padEnd(28)} ${'took'.padStart(8)} ${'probe worst'.padStart(12)} ${'added'.padStart(8)}`,
    );
    let over = 0;
    for (const c of cases) {
      const worsts: number[] = [];
      const tooks: number[] = [];
      let answer = '';
      for (let run = 0; run < RUNS; run++) {
        const send = c.prepare();
        const p = probe(base, victimHeaders);
        await sleep(200);
        const started = performance.now();
        try {
          const res = await send();
          const body = (await res.text()).replace(/\s+/g, ' ');
          const code = /"code":"([a-z_]+)"|"type":"([a-z_]+)"/.exec(body);
          answer = `${res.status} ${code?.[1] ?? code?.[2] ?? ''}`;
        } catch (error) {
          const e = error as Error & { cause?: Error };
          answer = `failed: ${e.cause?.message ?? e.message}`;
        }
        const took = performance.now() - started;
        tooks.push(took);
        await sleep(Math.max(100, WINDOW_MS - 200 - took));
        worsts.push(Math.max(...(await p.stop())));
      }
      const worst = pct(worsts, 0.5);
      const added = Math.max(0, worst - idleWorst);
      if (added > TARGET_MS) over++;
      console.log(
        `${c.name.padEnd(58)} ${answer.slice(0, 28).padEnd(28)} ${`${pct(tooks, 0.5).toFixed(0)} ms`.padStart(8)} ${`${worst.toFixed(1)} ms`.padStart(12)} ${`${added.toFixed(1)} ms`.padStart(8)}${added > TARGET_MS ? '  over' : ''}`,
      );
    }
    console.log(
      `\n${over === 0 ? 'every case' : `${cases.length - over} of ${cases.length} cases`} within ${TARGET_MS} ms added: the probe's worst latency while the case ran (median of ${RUNS} runs) less the idle baseline; "took" is the case's own answer time (median)`,
    );
  } finally {
    await stop(gateway.child);
    await stop(upstream.child);
    await db.cleanup();
  }
}

await main();
