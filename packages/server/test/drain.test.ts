/**
 * The real server process drained by SIGTERM: /readyz turns 503 at once, new connections are
 * refused, and a stream in flight is answered to its end, logged and settled before the process
 * exits. The process keeps its data in PGlite under DATA_DIR whichever database the suite runs
 * on, so the test runs once, in the PGlite project.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectDatabase } from '../src/db/client.ts';
import { databaseKind } from './support/app.ts';
import { chunkFrames, startOpenAIEmulator } from './support/emulators/openai.ts';
import { startServerProcess } from './support/process.ts';

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode });
    } else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within 30 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.runIf(databaseKind === 'pglite')('the server process drained by SIGTERM', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('answers /readyz 503, refuses new connections, and finishes, logs and settles the stream in flight', async () => {
    const emulator = await startOpenAIEmulator('openai', 'sk-drain');
    cleanups.push(() => emulator.upstream.close());
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-drain-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const server = await startServerProcess(dataDir, {
      OPENAI_API_KEY: emulator.apiKey,
      OPENAI_BASE_URL: emulator.baseUrl,
      GATEHOUSE_DRAIN_SECONDS: '120',
      // The /readyz request below is sent in two parts, around the SIGTERM.
      GATEHOUSE_HEADERS_TIMEOUT_MS: '120000',
      GATEHOUSE_REQUEST_TIMEOUT_MS: '120000',
    });
    cleanups.push(async () => {
      if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    });
    const json = { 'content-type': 'application/json' };
    const signup = await fetch(`${server.url}/v1/auth/signup`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email: `drain-${randomUUID()}@example.test`, password: `pw-${randomUUID()}` }),
    });
    expect(signup.status).toBe(201);
    const auth = {
      authorization: `Bearer ${((await signup.json()) as { apiKey: { key: string } }).apiKey.key}`,
    };
    const created = await fetch(`${server.url}/v1/gates`, {
      method: 'POST',
      headers: { ...auth, ...json },
      body: JSON.stringify({
        name: 'drained',
        model: 'openai/gpt-4o-mini',
        taskType: 'chat',
        spendingLimit: 10,
        spendingEnforcement: 'block',
      }),
    });
    expect(created.status).toBe(201);
    const gate = (await created.json()) as { id: string };

    // A stream whose first words have reached the client when SIGTERM arrives; the rest waits.
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    emulator.upstream.reply((request) => ({
      type: 'sse',
      frames: chunkFrames('openai', request, { content: ['Drained', ' in', ' time'] }),
      pause: { after: 2, until: released },
    }));
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...auth, ...json, 'x-gatehouse-gate-id': gate.id },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let streamed = '';
    while (!streamed.includes('Drained')) {
      const { value, done } = await reader.read();
      if (done) break;
      streamed += new TextDecoder().decode(value);
    }
    // A load balancer's probe on a connection it holds: its request line is sent, its headers not yet.
    const probe = net.connect(server.port, '127.0.0.1');
    let probeAnswer = '';
    probe.on('data', (chunk) => {
      probeAnswer += chunk;
    });
    const probeClosed = new Promise((resolve) => probe.once('close', resolve));
    await new Promise((resolve) => probe.once('connect', resolve));
    probe.write('GET /readyz HTTP/1.1\r\nHost: gatehouse\r\n');

    server.child.kill('SIGTERM');
    await until(() => server.output().includes('SIGTERM received'), 'the drain');
    probe.write('\r\n');
    await probeClosed;
    expect(probeAnswer).toMatch(/^HTTP\/1\.1 503 /);
    expect(probeAnswer.toLowerCase()).toContain('connection: close');
    expect(probeAnswer).toContain('"status":"draining"');
    // A new connection finds nothing listening.
    await expect(fetch(`${server.url}/readyz`)).rejects.toThrow();

    release();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      streamed += new TextDecoder().decode(value);
    }
    expect(streamed).toContain(' time');
    expect(streamed.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const exit = await exitOf(server.child);
    expect(exit, server.output()).toEqual({ code: 0, signal: null });

    const db = await connectDatabase({ dataDir, migrate: false });
    cleanups.push(() => db.close());
    const entries = await db.prisma.logEntry.findMany({ where: { gateId: gate.id } });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ success: true, stream: true, completionTokens: 10 });
    expect(entries[0]?.id).toBe(res.headers.get('x-gatehouse-request-id'));
    // Settled: the gate's spending is the entry's cost, not its reservation's worst case.
    const stored = await db.prisma.gate.findUniqueOrThrow({ where: { id: gate.id } });
    expect(Number(entries[0]?.costUsd)).toBeGreaterThan(0);
    expect(Number(stored.spendingCurrent)).toBeCloseTo(Number(entries[0]?.costUsd), 8);
  }, 120_000);
});
