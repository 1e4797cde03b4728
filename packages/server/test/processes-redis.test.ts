/**
 * Several gateway processes as one gateway: three real processes on one PostgreSQL database and
 * one Redis (a private redis-server, so that restarting it touches no other test). Every limit a
 * request spends against holds across them, a process killed under load leaves the others
 * answering and its holds let go, and a Redis restart refuses block limits while Redis is gone
 * and holds them exactly once it is back. (PostgreSQL only: PGlite belongs to one process.)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { worstCaseCost } from '../src/dataplane/cost.ts';
import { periodStart } from '../src/domain/spending.ts';
import { testDatabaseUrl } from './support/app.ts';
import { startServerProcess } from './support/process.ts';

type Server = Awaited<ReturnType<typeof startServerProcess>>;
type Answer = { status: number; body: Record<string, unknown> | null };

const PREFIX = 'gh';
const CONTENT = '[mock:delay=1500] how much does this cost?';
const MAX_TOKENS = 100;
const WORST = worstCaseCost(['mock/echo'], {
  messages: [{ role: 'user', content: CONTENT }],
  maxTokens: MAX_TOKENS,
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, seconds = 60): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`waited ${seconds} s for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.runIf(testDatabaseUrl)('three gateway processes on one PostgreSQL and one Redis', () => {
  const database = `gatehouse_redis_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const servers: Server[] = [];
  let redisPort = 0;
  let redisServer: ChildProcess | null = null;
  let counters: Redis;
  let env: Record<string, string>;
  let key = '';

  async function startRedis() {
    redisServer = spawn(
      'redis-server',
      ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    await until('redis-server to answer', async () => {
      const probe = new Redis(redisPort, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
      probe.on('error', () => {});
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG' ? true : undefined;
      } finally {
        probe.disconnect();
      }
    });
  }

  async function stopRedis() {
    const child = redisServer;
    redisServer = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  async function call(
    server: Server,
    path: string,
    init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const res = await fetch(`${server.url}${path}`, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers },
      ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null };
  }

  /** `count` chats on the gate, spread over the servers in turn; a server gone answers status 0. */
  function burst(
    gateId: string,
    count: number,
    over: Server[],
    extra: { headers?: Record<string, string>; path?: string } = {},
  ) {
    return Promise.all(
      Array.from({ length: count }, (_, i) =>
        call(over[i % over.length] as Server, extra.path ?? '/v3/chat', {
          body: { gateId, data: { messages: [{ role: 'user', content: CONTENT }] } },
          ...(extra.headers && { headers: extra.headers }),
        }).catch((): Answer => ({ status: 0, body: null })),
      ),
    );
  }

  const costOf = (answers: Answer[]) =>
    answers.filter((a) => a.status === 200).reduce((sum, a) => sum + Number(a.body?.costUsd ?? 0), 0);

  async function createGate(server: Server, body: Record<string, unknown>) {
    const created = await call(server, '/v1/gates', {
      body: {
        name: `gate-${randomUUID()}`,
        taskType: 'chat',
        model: 'mock/echo',
        maxTokens: MAX_TOKENS,
        ...body,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body as { id: string };
  }

  /** Redis's counter of a gate this period: spent and held, in USD. */
  async function redisCounter(gateId: string) {
    // Gates count by month unless told otherwise.
    const at = periodStart('monthly', new Date()).getTime();
    const [s, r] = await counters.hmget(`{${PREFIX}}:g:${gateId}:${at}`, 's', 'r');
    return { spent: Number(s ?? 0) / 1e8, held: Number(r ?? 0) / 1e8 };
  }

  /** Waits until PostgreSQL's counter of the gate shows `expected` (settlements are written behind). */
  async function storedSpending(server: Server, gateId: string, expected: number) {
    let current = Number.NaN;
    try {
      return await until(`the gate's stored spending to reach ${expected}`, async () => {
        const gate = await call(server, `/v1/gates/${gateId}`);
        current = Number(gate.body?.spendingCurrent);
        return Math.abs(current - expected) < 1e-8 ? current : undefined;
      });
    } catch (error) {
      const logs = servers.map((s) => s.output().split('\n').slice(-30).join('\n')).join('\n---\n');
      throw new Error(`${(error as Error).message} (it is ${current}); the servers said:\n${logs}`);
    }
  }

  beforeAll(async () => {
    redisPort = await freePort();
    await startRedis();
    counters = new Redis(redisPort, '127.0.0.1', { maxRetriesPerRequest: 1 });
    // The test stops Redis on purpose; the commands that fail meanwhile say so.
    counters.on('error', () => {});
    const c = new pg.Client({ connectionString: testDatabaseUrl });
    await c.connect();
    await c.query(`CREATE DATABASE "${database}"`);
    await c.end();
    const url = new URL(testDatabaseUrl as string);
    url.pathname = `/${database}`;
    env = {
      DATABASE_URL: url.toString(),
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      GATEHOUSE_REDIS_PREFIX: PREFIX,
      GATEHOUSE_LEASE_SECONDS: '3',
      GATEHOUSE_REDIS_FENCE_MS: '1000',
      GATEHOUSE_ARCHITECT_INTERVAL_MS: '0',
    };
    // The first applies the migrations; the others start on the migrated database.
    servers.push(await startServerProcess('unused-with-database-url', env));
    servers.push(
      ...(await Promise.all([1, 2].map(() => startServerProcess('unused-with-database-url', env)))),
    );
    const signup = await fetch(`${servers[0]?.url}/v1/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `owner-${randomUUID()}@example.test`, password: `pw-${randomUUID()}` }),
    });
    expect(signup.status).toBe(201);
    key = ((await signup.json()) as { apiKey: { key: string } }).apiKey.key;
  }, 180_000);

  afterAll(async () => {
    for (const s of servers) s.child.kill('SIGKILL');
    counters?.disconnect();
    await stopRedis();
    const c = new pg.Client({ connectionString: testDatabaseUrl });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await c.end();
  }, 60_000);

  it('a block gate: of 150 requests over three processes at most N pass, and the ledgers agree with the answers', async () => {
    const N = 20;
    const limit = Number((N * WORST).toFixed(8));
    const gate = await createGate(servers[1] as Server, {
      spendingLimit: limit,
      spendingEnforcement: 'block',
    });
    const answers = await burst(gate.id, 150, servers);
    const passed = answers.filter((a) => a.status === 200).length;
    expect(answers.filter((a) => a.status !== 200 && a.status !== 402)).toEqual([]);
    expect(passed).toBeGreaterThan(0);
    expect(passed).toBeLessThanOrEqual(N);
    for (const a of answers.filter((x) => x.status === 402)) {
      expect((a.body?.error as { code: string } | undefined)?.code).toBe('spending_limit_exceeded');
    }
    const charged = costOf(answers);
    expect(await storedSpending(servers[2] as Server, gate.id, charged)).toBeLessThanOrEqual(limit);
    expect(await redisCounter(gate.id)).toEqual({ spent: expect.closeTo(charged, 8), held: 0 });
  }, 180_000);

  it('a session budget holds across the processes', async () => {
    const N = 6;
    const limit = Number((N * WORST).toFixed(8));
    const agent = await createGate(servers[0] as Server, {
      gateType: 'agent',
      agentMode: 'observability',
      sessionSpendingLimit: limit,
    });
    const answers = await burst(agent.id, 150, servers, {
      headers: { 'x-gatehouse-session-id': 'shared-run' },
    });
    const passed = answers.filter((a) => a.status === 200).length;
    expect(answers.filter((a) => a.status !== 200 && a.status !== 402)).toEqual([]);
    expect(passed).toBeGreaterThan(0);
    expect(passed).toBeLessThanOrEqual(N);
    const session = await until('the session to count every answered request', async () => {
      const read = await call(servers[1] as Server, `/v1/sessions/shared-run?gateId=${agent.id}`);
      return read.body?.requestCount === passed ? read.body : undefined;
    });
    expect(Number(session.spendingCurrent)).toBeLessThanOrEqual(limit);
    expect(Number(session.spendingCurrent)).toBeCloseTo(costOf(answers), 8);
  }, 180_000);

  it('an agent gate over its sub-gate holds its limit across the processes', async () => {
    const N = 10;
    const limit = Number((N * WORST).toFixed(8));
    const agent = await createGate(servers[0] as Server, {
      gateType: 'agent',
      agentMode: 'orchestrated',
      orchestration: 'static',
      spendingLimit: limit,
      spendingEnforcement: 'block',
    });
    const sub = await createGate(servers[0] as Server, {});
    const attached = await call(servers[0] as Server, `/v1/gates/${agent.id}/sub-gates`, {
      body: { subGateId: sub.id, role: 'writer' },
    });
    expect(attached.status, JSON.stringify(attached.body)).toBe(201);
    const answers = await burst(agent.id, 150, servers, { headers: { 'x-gatehouse-action': 'writer' } });
    const passed = answers.filter((a) => a.status === 200).length;
    expect(answers.filter((a) => a.status !== 200 && a.status !== 402)).toEqual([]);
    expect(passed).toBeGreaterThan(0);
    // The sub-gate's own worst case is what is held (its settings answer): most are refused.
    expect(passed).toBeLessThan(150 / 4);
    const charged = costOf(answers);
    expect(await storedSpending(servers[1] as Server, agent.id, charged)).toBeLessThanOrEqual(limit);
    // The sub-gate is charged what it spent on the agent gate's behalf.
    await storedSpending(servers[2] as Server, sub.id, charged);
  }, 180_000);

  /** A new API key of the account, with `settings`; its secret. */
  async function newKey(settings: Record<string, unknown> = {}): Promise<{ id: string; key: string }> {
    const made = await call(servers[0] as Server, '/v1/api-keys', {
      body: { name: `key-${randomUUID()}`, ...settings },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    return made.body as { id: string; key: string };
  }

  it('rateLimitRpm: 10 on a gate and on a key holds across the three processes', async () => {
    const limitedGate = await createGate(servers[0] as Server, { rateLimitRpm: 10 });
    const onGate = await burst(limitedGate.id, 30, servers);
    expect(onGate.filter((a) => a.status === 200)).toHaveLength(10);
    expect(onGate.filter((a) => a.status === 429)).toHaveLength(20);
    const limitedKey = await newKey({ rateLimitRpm: 10 });
    const open = await createGate(servers[0] as Server, {});
    const onKey = await burst(open.id, 30, servers, {
      headers: { authorization: `Bearer ${limitedKey.key}` },
    });
    expect(onKey.filter((a) => a.status === 200)).toHaveLength(10);
    expect(onKey.filter((a) => a.status === 429)).toHaveLength(20);
  }, 180_000);

  it("a key's spending limit holds across the processes, over two gates", async () => {
    const N = 12;
    const limit = Number((N * WORST).toFixed(8));
    const budgeted = await newKey();
    // Set in its row before the key's first use, so no process has it cached without its limit.
    const url = new URL(testDatabaseUrl as string);
    url.pathname = `/${database}`;
    const c = new pg.Client({ connectionString: url.toString() });
    await c.connect();
    await c.query(`UPDATE api_keys SET spending_limit = $2, spending_enforcement = 'block' WHERE id = $1`, [
      budgeted.id,
      limit.toFixed(8),
    ]);
    const gates = [await createGate(servers[0] as Server, {}), await createGate(servers[1] as Server, {})];
    const headers = { authorization: `Bearer ${budgeted.key}` };
    const answers = (
      await Promise.all([
        burst((gates[0] as { id: string }).id, 75, servers, { headers }),
        burst((gates[1] as { id: string }).id, 75, servers, { headers }),
      ])
    ).flat();
    const passed = answers.filter((a) => a.status === 200).length;
    expect(answers.filter((a) => a.status !== 200 && a.status !== 402)).toEqual([]);
    expect(passed).toBeGreaterThan(0);
    expect(passed).toBeLessThanOrEqual(N);
    const charged = costOf(answers);
    const spent = await until("the key's stored spending to cover every answer", async () => {
      const [row] = (await c.query('SELECT spending_current FROM api_keys WHERE id = $1', [budgeted.id]))
        .rows;
      const value = Number(row?.spending_current);
      return Math.abs(value - charged) < 1e-8 ? value : undefined;
    });
    await c.end();
    expect(spent).toBeLessThanOrEqual(limit);
  }, 180_000);

  it('a process killed under load: the others answer 200 or 402, its holds are let go, and the ledgers agree', async () => {
    const N = 20;
    const limit = Number((N * WORST).toFixed(8));
    const gate = await createGate(servers[0] as Server, {
      spendingLimit: limit,
      spendingEnforcement: 'block',
    });
    const victim = servers[2] as Server;
    const load = burst(gate.id, 150, servers);
    // Once requests hold part of the limit (some of them the victim's), the victim dies.
    await until('requests to hold part of the limit', async () =>
      (await redisCounter(gate.id)).held > 0 ? true : undefined,
    );
    victim.child.kill('SIGKILL');
    try {
      const answers = await load;
      const survivors = answers.filter((_, i) => i % 3 !== 2);
      expect(survivors.filter((a) => a.status !== 200 && a.status !== 402)).toEqual([]);
      expect(answers.filter((a) => a.status === 200).length).toBeLessThanOrEqual(N);
      // The dead process's holds expire with their leases (3 s here) and are let go.
      await until('the dead process holds to be let go', async () =>
        (await redisCounter(gate.id)).held === 0 ? true : undefined,
      );
      const charged = costOf(answers);
      const stored = await storedSpending(servers[0] as Server, gate.id, charged);
      expect(stored).toBeLessThanOrEqual(limit);
      expect((await redisCounter(gate.id)).spent).toBeCloseTo(stored, 8);
    } finally {
      // The next test runs on three processes again, whatever happened here.
      servers[2] = await startServerProcess('unused-with-database-url', env);
    }
  }, 180_000);

  it('Redis restarted under load: block gates answer 503 while it is gone, and are exact once it is back', async () => {
    const N = 20;
    const limit = Number((N * WORST).toFixed(8));
    const gate = await createGate(servers[0] as Server, {
      spendingLimit: limit,
      spendingEnforcement: 'block',
    });
    const first = burst(gate.id, 30, servers);
    await until('requests to hold part of the limit', async () =>
      (await redisCounter(gate.id)).held > 0 ? true : undefined,
    );
    await stopRedis();
    const whileDown = await burst(gate.id, 9, servers);
    expect(whileDown.map((a) => a.status)).toEqual(Array(9).fill(503));
    expect((whileDown[0]?.body?.error as { code: string } | undefined)?.code).toBe('spending_unavailable');
    await startRedis();
    const before = await first;
    expect(before.filter((a) => a.status !== 200 && a.status !== 402 && a.status !== 503)).toEqual([]);
    // Back after the fence: requests pass again.
    const probes: Answer[] = [];
    await until('block gates to answer again', async () => {
      const [a] = await burst(gate.id, 1, servers);
      if (a) probes.push(a);
      return a && a.status !== 503 ? true : undefined;
    });
    const after = await burst(gate.id, 150, servers);
    expect(after.filter((a) => a.status !== 200 && a.status !== 402)).toEqual([]);
    // Every answered request is charged, exactly once; spending never passes the limit.
    const charged = costOf([...before, ...probes, ...after]);
    const stored = await until('the stored spending to cover every answer', async () => {
      const gateNow = await call(servers[1] as Server, `/v1/gates/${gate.id}`);
      const current = Number(gateNow.body?.spendingCurrent);
      return current >= charged - 1e-8 ? current : undefined;
    });
    expect(stored).toBeLessThanOrEqual(limit);
    await until('Redis and PostgreSQL to agree', async () => {
      const counter = await redisCounter(gate.id);
      const gateNow = await call(servers[2] as Server, `/v1/gates/${gate.id}`);
      return counter.held === 0 && Math.abs(counter.spent - Number(gateNow.body?.spendingCurrent)) < 1e-8
        ? true
        : undefined;
    });
  }, 180_000);
});
