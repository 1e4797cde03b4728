/**
 * Issue 14's acceptance with real processes: two gateway processes on one PostgreSQL database,
 * each with its own re-analysis scheduler. A gate due for its daily re-analysis is analysed once,
 * auto-apply changes it once and records a version, and a rollback restores the earlier settings
 * exactly. (PostgreSQL only: an embedded database belongs to one process.)
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { testDatabaseUrl } from './support/app.ts';
import { startServerProcess } from './support/process.ts';
import { useProcessDatabase } from './support/processDatabase.ts';

type Server = Awaited<ReturnType<typeof startServerProcess>>;

describe.runIf(testDatabaseUrl)('two gateway processes on one PostgreSQL', () => {
  const shared = useProcessDatabase('architect');
  const { servers } = shared;

  it('re-analyse a daily gate once, apply once with a version, and a rollback restores it', async () => {
    const env = { DATABASE_URL: await shared.create(), GATEHOUSE_ARCHITECT_INTERVAL_MS: '1000' };
    // The first applies the migrations; the second starts on the migrated database.
    servers.push(await startServerProcess('unused-with-database-url', env));
    servers.push(await startServerProcess('unused-with-database-url', env));
    const [one, two] = servers as [Server, Server];

    const signup = await fetch(`${one.url}/v1/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `owner-${randomUUID()}@example.test`, password: `pw-${randomUUID()}` }),
    });
    expect(signup.status).toBe(201);
    const key = ((await signup.json()) as { apiKey: { key: string } }).apiKey.key;
    const call = async (server: Server, path: string, init: { method?: string; body?: unknown } = {}) => {
      const res = await fetch(`${server.url}${path}`, {
        method: init.method ?? 'GET',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const created = await call(two, '/v1/gates', {
      method: 'POST',
      body: {
        name: 'Support answers',
        description: 'Answer customer questions about orders',
        model: 'mock/smart',
        taskType: 'chat',
        analysisMethod: 'cost',
        reanalysisPeriod: 'daily',
        autoApplyRecommendations: true,
      },
    });
    expect(created.status).toBe(201);
    const gateId = created.body.id as string;

    // Both schedulers look every second; wait until one has applied the change.
    const deadline = Date.now() + 30_000;
    let gate = created.body;
    while (gate.model === 'mock/smart' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      gate = (await call(one, `/v1/gates/${gateId}`)).body;
    }
    expect(gate.model).toBe('mock/fast');
    // Give both processes several more looks: still one job, one change.
    await new Promise((r) => setTimeout(r, 3_000));
    const db = new pg.Client({ connectionString: shared.url() });
    await db.connect();
    try {
      const jobs = await db.query('SELECT status, applied FROM architect_jobs WHERE gate_id = $1', [gateId]);
      expect(jobs.rows).toEqual([{ status: 'done', applied: true }]);
    } finally {
      await db.end();
    }
    const history = await call(two, `/v1/gates/${gateId}/history`);
    expect(history.status).toBe(200);
    const versions = history.body.versions as {
      id: string;
      version: number;
      changedBy: string;
      changedFields: string[];
    }[];
    expect(versions.map((v) => v.changedBy)).toEqual(['architect', 'user']);
    expect(versions[0]?.changedFields).toContain('model');

    // Roll back to the gate as it was created: every setting as before.
    const first = versions.find((v) => v.version === 1) as { id: string };
    const rolledBack = await call(one, `/v1/gates/${gateId}/rollback`, {
      method: 'POST',
      body: { versionId: first.id },
    });
    expect(rolledBack.status).toBe(200);
    const settingsOf = (g: Record<string, unknown>) => {
      const {
        updatedAt: _u,
        taskAnalysis: _t,
        spendingCurrent: _c,
        spendingPeriodStart: _p,
        spendingStatus: _s,
        ...rest
      } = g;
      return rest;
    };
    expect(settingsOf(rolledBack.body)).toEqual(settingsOf(created.body));
    const after = await call(two, `/v1/gates/${gateId}/history`);
    expect((after.body.versions as { changedBy: string }[]).map((v) => v.changedBy)).toEqual([
      'rollback',
      'architect',
      'user',
    ]);
  }, 120_000);
});
