/**
 * Rate limits across real gateway processes: two processes on one PostgreSQL and one Redis hold
 * a gate's `rateLimitRpm: 10` together, whichever of them each request reaches. (PostgreSQL and
 * Redis only: an embedded database belongs to one process.)
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { testDatabaseUrl } from './support/app.ts';
import { startServerProcess } from './support/process.ts';
import { useProcessDatabase } from './support/processDatabase.ts';
import { redisAnswers, testRedisUrl } from './support/redis.ts';

type Server = Awaited<ReturnType<typeof startServerProcess>>;

describe.runIf(testDatabaseUrl && redisAnswers)('rate limits over two gateway processes', () => {
  const shared = useProcessDatabase('rates');
  const { servers } = shared;

  it('hold a gate to 10 requests a minute over both', async () => {
    const env = { DATABASE_URL: await shared.create(), REDIS_URL: testRedisUrl };
    // The first applies the migrations; the second starts on the migrated database.
    servers.push(await startServerProcess('unused-with-database-url', env));
    servers.push(await startServerProcess('unused-with-database-url', env));

    const [one, two] = servers as [Server, Server];
    const signup = await fetch(`${one.url}/v1/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `owner-${randomUUID()}@example.test`, password: `pw-${randomUUID()}` }),
    });
    const key = ((await signup.json()) as { apiKey: { key: string } }).apiKey.key;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const created = await fetch(`${two.url}/v1/gates`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'limited', model: 'mock/echo', taskType: 'chat', rateLimitRpm: 10 }),
    });
    const gate = (await created.json()) as { id: string };

    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${servers[i % 2]?.url}/v3/chat`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            gateId: gate.id,
            data: { messages: [{ role: 'user', content: `hi ${i}` }] },
          }),
        }),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(10).fill(200), ...Array(10).fill(429)]);
    const refused = responses.find((r) => r.status === 429);
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  }, 120_000);
});
