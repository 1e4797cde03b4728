/**
 * The Redis connection every gateway process shares state through (REDIS_URL): spending
 * reservations, rate-limit windows, change notifications. One command connection per process,
 * opened at start; a subscriber is its own connection (Redis allows nothing else on it).
 *
 * Commands fail fast while Redis is unreachable (no offline queue, a short command timeout), so
 * that what depends on it can fail closed at once rather than hold a request.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { timeRedisCommands } from './roundTrips.ts';

let client: Redis | null = null;
let url: string | undefined;

const OPTIONS: RedisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  commandTimeout: 2_000,
  connectTimeout: 2_000,
  // Reconnect soon after Redis returns: at most a second between attempts.
  retryStrategy: (times) => Math.min(50 * 2 ** times, 1_000),
  lazyConnect: true,
};

/**
 * Opens the process's connection (once) and waits for it; when Redis cannot be reached the
 * process starts all the same (what needs Redis fails closed) and keeps trying.
 */
export async function openRedis(redisUrl: string): Promise<Redis> {
  if (client) return client;
  url = redisUrl;
  client = new Redis(redisUrl, { ...OPTIONS, connectionName: `gatehouse-${process.pid}` });
  timeRedisCommands(client);
  // Errors are reported through the commands that fail; an unhandled 'error' event would crash.
  let reported = false;
  client.on('error', (error) => {
    if (!reported) console.error('redis: connection failed; retrying', error.message);
    reported = true;
  });
  client.on('ready', () => {
    if (reported) console.error('redis: connected again');
    reported = false;
  });
  await client.connect().catch((error: Error) => {
    console.error('redis: cannot connect to REDIS_URL; retrying', error.message);
    reported = true;
  });
  return client;
}

/** The open connection, or null when REDIS_URL is not set. */
export function redis(): Redis | null {
  return client;
}

/** A new connection for a subscriber (pub/sub takes a connection for itself). */
export function redisSubscriber(): Redis {
  if (!url) throw new Error('redisSubscriber: Redis is not open');
  return new Redis(url, {
    ...OPTIONS,
    enableOfflineQueue: true,
    connectionName: `gatehouse-sub-${process.pid}`,
  });
}

export async function closeRedis(): Promise<void> {
  const c = client;
  client = null;
  if (c) await c.quit().catch(() => c.disconnect());
}
