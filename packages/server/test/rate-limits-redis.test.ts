/**
 * Rate limits shared through Redis: two gateway apps, each with its own runtime (its own
 * in-memory windows), on one database and one Redis, hold one gate's and one key's
 * `rateLimitRpm: 10` together, within one request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { closeRedis, openRedis } from '../src/db/redis.ts';
import { createRuntime, type Runtime } from '../src/runtime.ts';
import { type TestApp, useTestApp } from './support/app.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';
import { redisAnswers, testRedisUrl } from './support/redis.ts';

describe.runIf(redisAnswers)('rate limits across two apps sharing one Redis', () => {
  const one = useTestApp({ REDIS_URL: testRedisUrl });
  let two: { runtime: Runtime; request: TestApp['request'] };

  beforeAll(async () => {
    await openRedis(testRedisUrl);
    const runtime = createRuntime(one.config);
    const app = createApp(one.config, runtime);
    two = {
      runtime,
      request: async (path, init = {}) => {
        const { json, ...rest } = init;
        const headers = new Headers(rest.headers);
        if (json !== undefined) headers.set('content-type', 'application/json');
        return app.request(path, {
          ...rest,
          headers,
          ...(json !== undefined && { body: JSON.stringify(json) }),
        });
      },
    };
  });
  afterAll(async () => {
    await two?.runtime.close();
    await closeRedis();
  });

  /** 20 chat requests at once, every other one through the second app. */
  async function twentyAtOnce(user: TestUser, gateId: string) {
    const send = (i: number) =>
      (i % 2 === 0 ? one : two).request('/v3/chat', {
        method: 'POST',
        headers: user.auth,
        json: { gateId, data: { messages: [{ role: 'user', content: `hello ${i}` }] } },
      });
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => send(i)));
    return responses.map((r) => r.status).sort();
  }

  it('hold a gate to 10 requests a minute over both apps', async () => {
    const user = await signUpUser(one);
    const gate = await createGate(one, user, { rateLimitRpm: 10 });
    expect(await twentyAtOnce(user, gate.id)).toEqual([...Array(10).fill(200), ...Array(10).fill(429)]);
  });

  it('hold a key to 10 requests a minute over both apps', async () => {
    const user = await signUpUser(one);
    const created = await one.request('/v1/api-keys', {
      method: 'POST',
      headers: user.auth,
      json: { name: 'shared', rateLimitRpm: 10 },
    });
    const { key } = (await created.json()) as { key: string };
    const gate = await createGate(one, user);
    const withKey = { ...user, key, auth: { authorization: `Bearer ${key}` } };
    expect(await twentyAtOnce(withKey, gate.id)).toEqual([...Array(10).fill(200), ...Array(10).fill(429)]);
  });
});
