/**
 * Changes seen at once by every gateway process on one PostgreSQL: a key revoked or rolled, or a gate
 * changed, through one process is seen by another as soon as the notification arrives, through
 * Redis pub/sub when REDIS_URL is set and PostgreSQL LISTEN/NOTIFY when it is not. The processes
 * keep what they read for 10 minutes (GATEHOUSE_CACHE_TTL_MS), and a change written straight into the
 * database (which publishes nothing) is shown to stay unseen: only the notification explains
 * the refusal. The delays are measured and printed, never asserted. (PostgreSQL only: an
 * embedded database belongs to one process.)
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { testDatabaseUrl } from './support/app.ts';
import { say } from './support/chat.ts';
import { startServerProcess } from './support/process.ts';

type Server = Awaited<ReturnType<typeof startServerProcess>>;

const redisUrl = process.env.GATEHOUSE_TEST_REDIS_URL || 'redis://127.0.0.1:6379';
const redisAnswers = await (async () => {
  const probe = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1_000 });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    console.warn(`Redis at ${redisUrl} does not answer: the Redis half of changes-processes is skipped`);
    return false;
  } finally {
    probe.disconnect();
  }
})();

/**
 * Asks until `done` holds (30 s at most, far below the TTL and the background refresh at its
 * half): how long it took from `since`, and the how-manieth request it was.
 */
async function waitUntil(since: number, done: () => Promise<boolean>): Promise<string> {
  const deadline = Date.now() + 30_000;
  let requests = 1;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('the condition did not hold within 30 s');
    requests += 1;
    await new Promise((r) => setTimeout(r, 5));
  }
  return `${(performance.now() - since).toFixed(1)} ms (request ${requests})`;
}

/** Closes, from outside, the connection a gateway process hears the others' changes on. */
async function cutChangeFeed(redis: boolean, database: string, pid: number): Promise<void> {
  if (redis) {
    const client = new Redis(redisUrl);
    const line = String(await client.client('LIST'))
      .split('\n')
      .find((l) => l.includes(` name=gatehouse-sub-${pid} `));
    const id = line?.match(/^id=(\d+)/)?.[1];
    expect(id).toBeDefined();
    await client.client('KILL', 'ID', id as string);
    client.disconnect();
    return;
  }
  const c = new pg.Client({ connectionString: testDatabaseUrl });
  await c.connect();
  const { rowCount } = await c.query(
    'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = $2',
    [database, `gatehouse-changes-${pid}`],
  );
  await c.end();
  expect(rowCount).toBe(1);
}

const transports = [
  { name: 'Redis pub/sub', redis: true },
  { name: 'PostgreSQL LISTEN/NOTIFY (no Redis)', redis: false },
];

describe.runIf(testDatabaseUrl)('two gateway processes on one PostgreSQL', () => {
  describe.each(transports)('with $name', ({ name, redis }) => {
    const database = `gatehouse_changes_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const servers: Server[] = [];
    const admin = () => new pg.Client({ connectionString: testDatabaseUrl });

    afterAll(async () => {
      for (const s of servers) s.child.kill('SIGKILL');
      const c = admin();
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await c.end();
    }, 60_000);

    it.skipIf(redis && !redisAnswers)(
      'a revoked key, a rolled key and a changed gate are seen by the other process once notified, not after the TTL',
      async () => {
        const c = admin();
        await c.connect();
        await c.query(`CREATE DATABASE "${database}"`);
        await c.end();
        const url = new URL(testDatabaseUrl as string);
        url.pathname = `/${database}`;
        const env = {
          DATABASE_URL: url.toString(),
          GATEHOUSE_ARCHITECT_INTERVAL_MS: '0',
          GATEHOUSE_CACHE_TTL_MS: '600000',
          REDIS_URL: redis ? redisUrl : '',
          // A channel of this test's own: other test files share the Redis.
          GATEHOUSE_REDIS_PREFIX: `test-${randomUUID()}`,
        };
        // The first applies the migrations; the second starts on the migrated database.
        servers.push(await startServerProcess('unused-with-database-url', env));
        servers.push(await startServerProcess('unused-with-database-url', env));
        const [one, two] = servers as [Server, Server];
        expect(one.output()).toContain('changes: listening through');

        const signup = await fetch(`${one.url}/v1/auth/signup`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            email: `owner-${randomUUID()}@example.test`,
            password: `pw-${randomUUID()}`,
          }),
        });
        expect(signup.status).toBe(201);
        const ownerKey = ((await signup.json()) as { apiKey: { key: string } }).apiKey.key;
        const call = async (server: Server, key: string, path: string, method = 'GET', body?: unknown) => {
          const res = await fetch(`${server.url}${path}`, {
            method,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            ...(body !== undefined && { body: JSON.stringify(body) }),
          });
          const text = await res.text();
          return { status: res.status, body: (text ? JSON.parse(text) : null) as Record<string, unknown> };
        };
        const newKey = async () => {
          const made = await call(one, ownerKey, '/v1/api-keys', 'POST', { name: 'client' });
          expect(made.status).toBe(201);
          return made.body as { id: string; key: string };
        };
        const newGate = async (gateName: string) => {
          const made = await call(one, ownerKey, '/v1/gates', 'POST', {
            name: gateName,
            model: 'mock/echo',
            taskType: 'chat',
          });
          expect(made.status).toBe(201);
          return made.body.id as string;
        };
        const chat = (key: string, gateId: string) =>
          call(two, key, '/v3/chat', 'POST', { gateId, data: { messages: say('hello') } });

        const revoked = await newKey();
        const rolled = await newKey();
        const control = await newKey();
        const gate = await newGate('changed through the gateway');
        const untouched = await newGate('changed behind its back');
        // The second process reads the keys and gates once, and keeps them for 10 minutes.
        for (const key of [revoked.key, rolled.key, control.key]) {
          for (const gateId of [gate, untouched]) expect((await chat(key, gateId)).status).toBe(200);
        }

        // Written straight into the database, a change publishes nothing: the cached copy stays.
        const db = new pg.Client({ connectionString: url.toString() });
        await db.connect();
        await db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [control.id]);
        await db.query(`UPDATE gates SET model = 'mock/smart' WHERE id = $1`, [untouched]);
        await db.end();
        expect((await chat(control.key, gate)).status).toBe(200);
        expect((await chat(control.key, untouched)).body.model).toBe('mock/echo');

        // Revoked through the first process: the second refuses it once the notification arrives.
        const revokedAnswer = await call(one, ownerKey, `/v1/api-keys/${revoked.id}`, 'DELETE');
        expect(revokedAnswer.status).toBe(204);
        const answeredAt = performance.now();
        const keyDelay = await waitUntil(
          answeredAt,
          async () => (await chat(revoked.key, gate)).status === 401,
        );

        // Rolled through the first process with no grace: the second refuses the old secret.
        const rollAnswer = await call(one, ownerKey, `/v1/api-keys/${rolled.id}/roll`, 'POST', {
          graceSeconds: 0,
        });
        expect(rollAnswer.status).toBe(200);
        await waitUntil(performance.now(), async () => (await chat(rolled.key, gate)).status === 401);
        expect((await chat(rollAnswer.body.key as string, gate)).status).toBe(200);

        const changed = await call(one, ownerKey, `/v1/gates/${gate}`, 'PATCH', { model: 'mock/fast' });
        expect(changed.status).toBe(200);
        const changedAt = performance.now();
        const gateDelay = await waitUntil(
          changedAt,
          async () => (await chat(control.key, gate)).body.model === 'mock/fast',
        );

        // Only what was published was dropped: the changes made behind the gateway's back are
        // still unseen, so nothing but the notifications explains what the second process saw.
        expect((await chat(control.key, untouched)).body.model).toBe('mock/echo');
        console.log(
          `${name}: revoked key refused ${keyDelay}, changed gate seen ${gateDelay} after the first process answered (TTL 10 min)`,
        );

        // The second process's notifications cut off: whatever it missed meanwhile, it drops
        // every cached copy, so even the changes that published nothing are seen now.
        await cutChangeFeed(redis, database, two.child.pid as number);
        await waitUntil(performance.now(), async () => (await chat(control.key, untouched)).status === 401);
        expect(two.output()).toContain(`changes: ${redis ? 'Redis' : 'PostgreSQL LISTEN'} lost`);
        const other = await newKey();
        expect((await chat(other.key, untouched)).body.model).toBe('mock/smart');
      },
      180_000,
    );
  });
});
