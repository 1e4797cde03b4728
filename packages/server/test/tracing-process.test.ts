/**
 * A real server process with OTEL_EXPORTER_OTLP_ENDPOINT set sends its traces to a collector
 * (here a node:http server taking OTLP/HTTP JSON): the request's span is the child of the
 * client's traceparent, with the gate's resolution, the attempts and the provider calls (GenAI
 * attributes) under it. With GATEHOUSE_LOG_FORMAT=json its process log is JSON lines, and a
 * line printed for a request carries that request's id.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess } from './support/process.ts';

type OtlpValue = { stringValue?: string; intValue?: string | number; doubleValue?: number };
type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: OtlpValue }[];
};
type OtlpExport = { resourceSpans?: { scopeSpans?: { spans?: OtlpSpan[] }[] }[] };

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;

const spans: OtlpSpan[] = [];
let collector: Server;
let gateway: Awaited<ReturnType<typeof startServerProcess>>;
let dataDir: string;

const attr = (span: OtlpSpan | undefined, key: string) => {
  const v = span?.attributes?.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : v?.doubleValue);
};

beforeAll(async () => {
  collector = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.headers['content-type']?.includes('json')) {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as OtlpExport;
        for (const rs of body.resourceSpans ?? [])
          for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const { port } = collector.address() as AddressInfo;
  dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-tracing-'));
  gateway = await startServerProcess(path.join(dataDir, 'data'), {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    // Spans go out every 100 ms rather than every 5 s.
    OTEL_BSP_SCHEDULE_DELAY: '100',
    GATEHOUSE_LOG_FORMAT: 'json',
    // An OpenAI-compatible provider nothing listens for: its failure is printed for the request.
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
  });
}, 120_000);

afterAll(async () => {
  gateway?.child.kill('SIGKILL');
  await new Promise((resolve) => collector?.close(resolve));
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function signUp() {
  const res = await fetch(`${gateway.url}/v1/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      email: `trace-${randomBytes(6).toString('hex')}@example.test`,
      password: 'pw-12345678',
    }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const key = ((await res.json()) as { apiKey: { key: string } }).apiKey.key;
  return { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
}

async function createGate(headers: Record<string, string>, gate: Record<string, unknown>) {
  const res = await fetch(`${gateway.url}/v1/gates`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: `gate-${randomBytes(6).toString('hex')}`, taskType: 'chat', ...gate }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/** Waits for the collector to hold a span of `traceId` that `match` accepts (30 s at most). */
async function spanOf(traceId: string, match: (s: OtlpSpan) => boolean): Promise<OtlpSpan> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
    const found = spans.find((s) => s.traceId === traceId && match(s));
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no such span in trace ${traceId}: ${JSON.stringify(spans.map((s) => s.name))}`);
}

describe('traces over OTLP/HTTP', () => {
  it("nest the gate's resolution, each attempt and each provider call under the request, a child of the client's traceparent", async () => {
    const headers = await signUp();
    const gateId = await createGate(headers, {
      model: 'mock/echo',
      routingStrategy: 'fallback',
      fallbackModels: ['mock/fast'],
    });
    const traceId = randomBytes(16).toString('hex');
    const parentId = randomBytes(8).toString('hex');
    const res = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...headers, 'x-gatehouse-gate-id': gateId, traceparent: `00-${traceId}-${parentId}-01` },
      body: JSON.stringify({
        model: 'mock/echo',
        messages: [{ role: 'user', content: '[mock:fail=500@mock/echo] hello' }],
      }),
    });
    expect(res.status, await res.clone().text()).toBe(200);

    const request = await spanOf(traceId, (s) => s.kind === SPAN_KIND_SERVER);
    expect(request.parentSpanId).toBe(parentId);
    expect(request.name).toBe('POST /v1/chat/completions');
    expect(attr(request, 'gatehouse.gate.id')).toBe(gateId);
    expect(attr(request, 'gen_ai.response.model')).toBe('mock/fast');
    expect(attr(request, 'gen_ai.usage.input_tokens')).toBeGreaterThan(0);
    expect(attr(request, 'http.response.status_code')).toBe(200);

    const resolution = await spanOf(traceId, (s) => s.name === 'gatehouse.gate.resolve');
    expect(resolution.parentSpanId).toBe(request.spanId);
    const first = await spanOf(
      traceId,
      (s) => s.name === 'gatehouse.attempt' && attr(s, 'gatehouse.attempt') === 1,
    );
    const second = await spanOf(
      traceId,
      (s) => s.name === 'gatehouse.attempt' && attr(s, 'gatehouse.attempt') === 2,
    );
    expect([first.parentSpanId, second.parentSpanId]).toEqual([request.spanId, request.spanId]);
    expect(attr(first, 'gen_ai.request.model')).toBe('mock/echo');
    expect(attr(second, 'gen_ai.request.model')).toBe('mock/fast');

    // The provider calls: CLIENT spans inside their attempts, the failed one marked.
    const failedCall = await spanOf(
      traceId,
      (s) => s.kind === SPAN_KIND_CLIENT && s.parentSpanId === first.spanId,
    );
    expect(attr(failedCall, 'gen_ai.operation.name')).toBe('chat');
    expect(attr(failedCall, 'gen_ai.provider.name')).toBe('mock');
    expect(attr(failedCall, 'error.type')).toBe('http');
    const call = await spanOf(
      traceId,
      (s) => s.kind === SPAN_KIND_CLIENT && s.parentSpanId === second.spanId,
    );
    expect(call.name).toMatch(/^chat /);
    expect(attr(call, 'gen_ai.usage.output_tokens')).toBeGreaterThan(0);
  });

  it('names the reservation of a block gate', async () => {
    const headers = await signUp();
    const gateId = await createGate(headers, {
      model: 'mock/echo',
      spendingLimit: 10,
      spendingEnforcement: 'block',
    });
    const traceId = randomBytes(16).toString('hex');
    const res = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        ...headers,
        'x-gatehouse-gate-id': gateId,
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      },
      body: JSON.stringify({ model: 'mock/echo', messages: [{ role: 'user', content: 'hello' }] }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const request = await spanOf(traceId, (s) => s.kind === SPAN_KIND_SERVER);
    const reservation = await spanOf(traceId, (s) => s.name === 'gatehouse.reservation');
    expect(reservation.parentSpanId).toBe(request.spanId);
    expect(attr(reservation, 'gatehouse.reservation.usd')).toBeGreaterThan(0);
  });
});

describe('the process log with GATEHOUSE_LOG_FORMAT=json', () => {
  it('is JSON lines, and a line printed for a request names its id (Node 24 and later)', async () => {
    const headers = await signUp();
    const gateId = await createGate(headers, { model: 'openai/gpt-4o-mini' });
    const res = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...headers, 'x-gatehouse-gate-id': gateId },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
    });
    expect(res.status).toBe(502);
    // The entry is written within a moment of the answer.
    let entryId: string | undefined;
    for (const deadline = Date.now() + 10_000; !entryId && Date.now() < deadline; ) {
      const logs = await fetch(`${gateway.url}/v1/logs?gateId=${gateId}`, { headers });
      entryId = ((await logs.json()) as { logs: { id: string }[] }).logs[0]?.id;
      if (!entryId) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(entryId).toBeDefined();

    let lines: Record<string, unknown>[] = [];
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      lines = gateway
        .output()
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      if (lines.some((l) => String(l.msg).startsWith('provider: '))) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(lines.find((l) => String(l.msg).startsWith('Gatehouse is listening on'))).toMatchObject({
      level: 'info',
    });
    const printed = lines.find((l) => String(l.msg).startsWith('provider: '));
    expect(printed).toMatchObject({ level: 'error' });
    // On Node 24 and later the line names its request; before, that would cost every promise a
    // hook (processLog.ts), so it does not.
    if (Number(process.versions.node.split('.')[0]) >= 24) expect(printed?.requestId).toBe(entryId);
    else expect(printed).not.toHaveProperty('requestId');
  });
});
