/**
 * The Redis the suites share state through (GATEHOUSE_TEST_REDIS_URL, by default the machine's
 * on 127.0.0.1:6379). Suites that need it run where it answers and are skipped, with a notice,
 * where it does not. Their keys name the ids of rows made per test, so files never share one.
 */
import { reachable } from './reachable.ts';

export const testRedisUrl = process.env.GATEHOUSE_TEST_REDIS_URL || 'redis://127.0.0.1:6379';

export const redisAnswers = await reachable(testRedisUrl, 6379);
// CI starts Redis (.ci/run): there a Redis that does not answer fails the suites, never skips them.
if (!redisAnswers && process.env.GATEHOUSE_REQUIRE_REDIS) {
  throw new Error(`Redis at ${testRedisUrl} does not answer, and GATEHOUSE_REQUIRE_REDIS is set`);
}
if (!redisAnswers) console.warn(`Redis at ${testRedisUrl} does not answer: its suites are skipped`);
