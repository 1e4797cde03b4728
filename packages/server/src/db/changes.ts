/**
 * Changes every gateway process must see at once. What a process keeps in memory (gates, API keys
 * with their accounts) is dropped in every process when it changes in one: the writer publishes
 * the change once it is committed, and each process, this one first, drops its copy on receipt.
 * The caches' own TTL stays the safety net for a notification that never arrives.
 *
 * How changes travel: Redis pub/sub when REDIS_URL is set; PostgreSQL LISTEN/NOTIFY on a
 * connection of its own otherwise; with PGlite nowhere (one process owns the database). While
 * that connection is down, and again once it listens anew, every cache is dropped whole: a change
 * published meanwhile is lost to this process, and what it read meanwhile is not kept past it.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { z } from 'zod';
import { sql } from './client.ts';
import { redis, redisSubscriber } from './redis.ts';

const id = z.string().min(1).max(100);
const changeSchema = z.discriminatedUnion('kind', [
  /** Created, changed, rolled back, deleted; its spending settings or status. */
  z.object({ kind: z.literal('gate'), userId: id, gateId: id }),
  /** Created or revoked. */
  z.object({ kind: z.literal('apiKey'), userId: id, keyId: id }),
  /** Created, its plan changed, disabled or enabled. */
  z.object({ kind: z.literal('account'), userId: id }),
  /** An agent session ended. */
  z.object({ kind: z.literal('agentSession'), userId: id, sessionId: id }),
]);
export type Change = z.infer<typeof changeSchema>;

/** What a holder of cached state hears: a change, or `everything` when changes may have been missed. */
export type Heard = Change | { kind: 'everything' };

const handlers: ((heard: Heard) => void)[] = [];

/** Registers what drops a cached copy; it runs for this process's changes and every other's. */
export function onChange(handler: (heard: Heard) => void): void {
  handlers.push(handler);
}

function deliver(heard: Heard): void {
  for (const handler of handlers) {
    try {
      handler(heard);
    } catch (error) {
      console.error('changes: a handler failed', error);
    }
  }
}

type Feed = { send(message: string): Promise<unknown>; close(): Promise<void> };
let feed: Feed | null = null;
/** This process's own messages come back to it: they are known by this. */
const origin = randomUUID();
let sendFailed = false;

/**
 * Announces a committed change: this process's copies are dropped before it returns, the other
 * processes' once the message reaches them (it has been handed to Redis or PostgreSQL when this
 * resolves). Never rejects: the change is made, and a message that cannot be sent is reported.
 */
export async function publish(change: Change): Promise<void> {
  deliver(change);
  if (!feed) return;
  try {
    await feed.send(JSON.stringify({ from: origin, change }));
    if (sendFailed) console.error('changes: publishing again');
    sendFailed = false;
  } catch (error) {
    if (!sendFailed) {
      console.error(
        'changes: could not publish a change; other processes see it once their caches expire',
        (error as Error).message,
      );
    }
    sendFailed = true;
  }
}

const messageSchema = z.object({ from: z.string(), change: z.unknown() });

function receive(message: string): void {
  let parsed: z.infer<typeof messageSchema>;
  try {
    parsed = messageSchema.parse(JSON.parse(message));
  } catch {
    return; // not one of ours
  }
  if (parsed.from === origin) return;
  const change = changeSchema.safeParse(parsed.change);
  // A kind this version does not know (another version's, during an upgrade): drop everything.
  deliver(change.success ? change.data : { kind: 'everything' });
}

let listening = false;

function listened(how: string): void {
  if (listening) return;
  // Whatever was read before now may predate a change this process did not hear.
  deliver({ kind: 'everything' });
  listening = true;
  console.log(`changes: listening through ${how}`);
}

function lost(how: string, why: string): void {
  if (!listening) return;
  listening = false;
  deliver({ kind: 'everything' });
  console.error(
    `changes: ${how} lost (${why}); every cached gate and key is dropped now, and again once it is back`,
  );
}

const RETRY_MS = (attempt: number) => Math.min(50 * 2 ** attempt, 1_000);

function redisFeed(channel: string): { feed: Feed; ready: Promise<void> } {
  const subscriber = redisSubscriber();
  let firstListen: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    firstListen = resolve;
  });
  subscriber.on('error', () => {}); // reported by 'close' below, and by the command connection
  subscriber.on('message', (from: string, message: string) => {
    if (from === channel) receive(message);
  });
  // ioredis subscribes again on its own after a reconnection, but says 'ready' before it has:
  // the caches are dropped once the subscription is confirmed, not before.
  subscriber.on('ready', () => {
    subscriber.subscribe(channel).then(
      () => {
        listened('Redis');
        firstListen();
      },
      () => {},
    );
  });
  subscriber.on('close', () => lost('Redis', 'connection closed'));
  subscriber.connect().catch(() => {});
  return {
    ready,
    feed: {
      send: async (message) => {
        const client = redis();
        if (!client) throw new Error('Redis is closed');
        await client.publish(channel, message);
      },
      close: async () => {
        subscriber.removeAllListeners('close');
        await subscriber.quit().catch(() => subscriber.disconnect());
      },
    },
  };
}

function postgresFeed(url: string, channel: string): { feed: Feed; ready: Promise<void> } {
  let client: pg.Client | null = null;
  let closed = false;
  let firstListen: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    firstListen = resolve;
  });

  async function listen(attempt: number): Promise<void> {
    if (closed) return;
    const c = new pg.Client({
      connectionString: url,
      keepAlive: true,
      application_name: `gatehouse-changes-${process.pid}`,
    });
    c.on('error', () => {}); // the connection's end follows, and is reported there
    try {
      await c.connect();
      c.on('notification', (n) => {
        if (n.channel === channel && n.payload) receive(n.payload);
      });
      c.on('end', () => {
        if (client !== c) return;
        client = null;
        lost('PostgreSQL LISTEN', 'connection ended');
        void listen(0);
      });
      await c.query(`LISTEN ${channel}`);
      client = c;
      listened('PostgreSQL LISTEN/NOTIFY');
      firstListen();
    } catch (error) {
      c.end().catch(() => {});
      if (attempt === 0)
        console.error('changes: cannot LISTEN on PostgreSQL; retrying', (error as Error).message);
      await new Promise((r) => setTimeout(r, RETRY_MS(attempt)));
      return listen(attempt + 1);
    }
  }
  void listen(0);
  return {
    ready,
    feed: {
      // Sent as a statement of its own, after the change's transaction committed.
      send: (message) => sql().query('SELECT pg_notify($1, $2)', [channel, message]),
      close: async () => {
        closed = true;
        const c = client;
        client = null;
        await c?.end().catch(() => {});
      },
    },
  };
}

/** PostgreSQL's channels are the database's own: one name serves every deployment. */
const POSTGRES_CHANNEL = 'gatehouse_changes';
/** How long start-up waits for the first subscription before going on without it. */
const FIRST_LISTEN_WAIT_MS = 2_000;

/**
 * Starts listening to the other processes' changes and publishing this one's; resolves once
 * listening (or after FIRST_LISTEN_WAIT_MS, trying on meanwhile). Nothing to do with PGlite.
 */
export async function startChangeFeed(opts: {
  redisUrl: string | undefined;
  redisPrefix: string;
  databaseUrl: string | undefined;
}): Promise<void> {
  if (feed) return;
  const started = opts.redisUrl
    ? redisFeed(`${opts.redisPrefix}:changes`)
    : opts.databaseUrl
      ? postgresFeed(opts.databaseUrl, POSTGRES_CHANNEL)
      : null;
  if (!started) return;
  feed = started.feed;
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, FIRST_LISTEN_WAIT_MS);
  });
  await Promise.race([started.ready, waited]);
  clearTimeout(timer);
}

export async function stopChangeFeed(): Promise<void> {
  const f = feed;
  feed = null;
  listening = false;
  await f?.close();
}
