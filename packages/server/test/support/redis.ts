/**
 * The Redis the suites share state through (GATEHOUSE_TEST_REDIS_URL, by default the machine's
 * on 127.0.0.1:6379). Suites that need it run where it answers and are skipped, with a notice,
 * where it does not. Their keys name the ids of rows made per test, so files never share one.
 */
import net from 'node:net';

export const testRedisUrl = process.env.GATEHOUSE_TEST_REDIS_URL || 'redis://127.0.0.1:6379';

function answers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || 6379) });
    socket.setTimeout(1000);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

export const redisAnswers = await answers(testRedisUrl);
// CI starts Redis (.ci/run): there a Redis that does not answer fails the suites, never skips them.
if (!redisAnswers && process.env.GATEHOUSE_REQUIRE_REDIS) {
  throw new Error(`Redis at ${testRedisUrl} does not answer, and GATEHOUSE_REQUIRE_REDIS is set`);
}
if (!redisAnswers) console.warn(`Redis at ${testRedisUrl} does not answer: its suites are skipped`);
