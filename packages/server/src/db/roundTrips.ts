/**
 * Round trips to the database and to Redis, timed into /metrics' histograms: every statement of
 * the raw driver (the request path's and the log writer's), of Prisma (through its driver
 * adapter), and every Redis command.
 */
import type { Redis } from 'ioredis';
import { dbRoundTrip, redisRoundTrip, timed } from '../observability/metrics.ts';
import type { SqlDriver } from './driver.ts';

/** Prisma's adapter, its connections and transactions with their queries timed. */
function timedQueryable<T extends object>(target: T): T {
  return new Proxy(target, {
    get(obj, prop) {
      const value = Reflect.get(obj, prop, obj) as unknown;
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => Promise<unknown>;
      if (prop === 'queryRaw' || prop === 'executeRaw') {
        return (...args: unknown[]) =>
          timed(dbRoundTrip, { client: 'prisma' }, () => method.apply(obj, args));
      }
      if (prop === 'connect' || prop === 'startTransaction') {
        return async (...args: unknown[]) => timedQueryable((await method.apply(obj, args)) as object);
      }
      return method.bind(obj);
    },
  });
}

export function withRoundTrips(driver: SqlDriver): SqlDriver {
  return {
    ...driver,
    query: (sql, params, opts) =>
      timed(dbRoundTrip, { client: 'sql' }, () => driver.query(sql, params, opts)),
    transaction: (statements) => timed(dbRoundTrip, { client: 'sql' }, () => driver.transaction(statements)),
    adapter: timedQueryable(driver.adapter),
  };
}

/** Times each command the connection sends (pipelines and scripts included), by its name. */
export function timeRedisCommands(client: Redis): void {
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((command: Parameters<Redis['sendCommand']>[0], stream?: unknown) => {
    const end = redisRoundTrip.startTimer({ command: command.name });
    command.promise.then(
      () => end(),
      () => end(),
    );
    return send(command, stream as never);
  }) as Redis['sendCommand'];
}
