/**
 * The real server process (src/main.ts) stopped by SIGTERM: what it answered is in its log.
 * The process keeps its data in PGlite under DATA_DIR whichever database the suite runs on, so
 * the test runs once, in the PGlite project.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectDatabase } from '../src/db/client.ts';
import { databaseKind } from './support/app.ts';
import { say } from './support/chat.ts';
import { startServerProcess } from './support/process.ts';

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode });
    } else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

describe.runIf(databaseKind === 'pglite')('the server process on SIGTERM', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('has written a log entry for every request it answered once it has exited', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-shutdown-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const server = await startServerProcess(dataDir);
    cleanups.push(async () => {
      if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    });
    const json = { 'content-type': 'application/json' };

    const signup = await fetch(`${server.url}/v1/auth/signup`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        email: `shutdown-${randomUUID()}@example.test`,
        password: `pw-${randomUUID()}`,
      }),
    });
    expect(signup.status, await signup.clone().text()).toBe(201);
    const auth = {
      authorization: `Bearer ${((await signup.json()) as { apiKey: { key: string } }).apiKey.key}`,
    };
    const created = await fetch(`${server.url}/v1/gates`, {
      method: 'POST',
      headers: { ...auth, ...json },
      body: JSON.stringify({ name: 'shutdown', model: 'mock/echo', taskType: 'chat' }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const gate = (await created.json()) as { id: string };

    const N = 50;
    const answers = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const res = await fetch(`${server.url}/v3/chat`, {
          method: 'POST',
          headers: { ...auth, ...json },
          body: JSON.stringify({ gateId: gate.id, data: { messages: say(`request ${i}`) } }),
        });
        expect(res.status).toBe(200);
        return ((await res.json()) as { id: string }).id;
      }),
    );
    server.child.kill('SIGTERM');
    const exit = await exitOf(server.child);
    expect(exit, server.output()).toEqual({ code: 0, signal: null });

    const db = await connectDatabase({ dataDir, migrate: false });
    cleanups.push(() => db.close());
    const entries = await db.prisma.logEntry.findMany({
      where: { gateId: gate.id },
      select: { id: true, success: true },
    });
    expect(entries).toHaveLength(N);
    expect(new Set(entries.map((e) => e.id))).toEqual(new Set(answers));
    expect(entries.every((e) => e.success)).toBe(true);
  }, 60_000);
});
