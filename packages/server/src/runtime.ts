import type { Config } from './config.ts';
import { createDataPlane, type DataPlane } from './dataplane/chat.ts';
import { createSqlLedger } from './dataplane/ledger.ts';
import { LocalLedger } from './dataplane/localLedger.ts';
import { createLogWriter, type LogWriter } from './dataplane/logWriter.ts';
import { createRateLimits } from './dataplane/rateLimits.ts';
import { RedisLedger } from './dataplane/redisLedger.ts';
import { sql } from './db/client.ts';
import { redis } from './db/redis.ts';
import type { ArchitectDeps } from './domain/architect.ts';
import { createModelNames, type ModelNames, modelProblem } from './domain/catalog.ts';
import type { SpendingCounters } from './domain/spending.ts';
import { enqueueSpendingAlert, startWebhookDeliveries } from './domain/webhooks.ts';
import { createProviderRegistry } from './providers/registry.ts';

/** The long-lived parts of the data plane; close() flushes what they still hold. */
export type Runtime = {
  dataPlane: DataPlane;
  logs: LogWriter;
  /** The ledger's counters, for the control plane's reads and limit changes. */
  spending: SpendingCounters;
  /** How model names written by users become `provider/model` ids, given what is configured. */
  models: ModelNames;
  /** What the Architect reads with: the model names, and GATEHOUSE_ARCHITECT_MODEL's reader. */
  architect: ArchitectDeps;
  close(): Promise<void>;
};

/** `random` picks round-robin's order; `clock` (milliseconds) moves the rate limits' windows. */
export function createRuntime(
  config: Config,
  opts: { random?: () => number; clock?: () => number } = {},
): Runtime {
  const providers = createProviderRegistry(config.providers);
  const models = createModelNames(providers.configured);
  // Checked before anything starts that would need closing.
  const architectModel = architectModelOf(config.architect.model, models);
  const logs = createLogWriter();
  // Redis, shared by every process, decides spending for all of them; without it, the embedded
  // database belongs to this process alone, so spending can be decided in memory, and PostgreSQL
  // decides it row by row.
  const shared = redis();
  const ledger = shared
    ? new RedisLedger(shared, { prefix: config.redisPrefix, ...config.redisLedger })
    : sql().kind === 'pglite'
      ? new LocalLedger()
      : createSqlLedger();
  // Spending alerts: written off the request's path, sent by whichever process claims them.
  const webhooks = startWebhookDeliveries(config.webhooks);
  const enqueuing = new Set<Promise<void>>();
  const dataPlane = createDataPlane({
    spendingCrossed: (crossed) => {
      const written: Promise<void> = enqueueSpendingAlert(crossed).then(
        (id) => {
          if (id) webhooks.kick();
        },
        (error) => console.error('webhooks: could not write the alert of gate', crossed.gate.id, error),
      );
      enqueuing.add(written);
      void written.finally(() => enqueuing.delete(written));
    },
    providers,
    models,
    logs,
    ledger,
    rateLimits: createRateLimits({ prefix: config.redisPrefix, ...(opts.clock && { clock: opts.clock }) }),
    attemptTimeoutMs: config.attemptTimeoutMs,
    clientBodyBytes: config.logClientBodyBytes,
    ...(opts.random && { random: opts.random }),
  });
  return {
    dataPlane,
    logs,
    spending: ledger,
    models,
    architect: { models, reader: architectModel ? { dataPlane, model: architectModel } : null },
    // The log queue first (its entries are what the ledger's counters are checked against), and
    // each part's failure reported, not thrown: shutdown must reach the end, the database's close.
    close: async () => {
      await Promise.all(enqueuing);
      await webhooks.close();
      await logs
        .close()
        .catch((error) => console.error('logs: could not write every entry before closing', error));
      await ledger
        .close()
        .catch((error) => console.error('spending: could not write the counters before closing', error));
    },
  };
}

/** GATEHOUSE_ARCHITECT_MODEL's model id, refused at start when it names no configured chat model. */
function architectModelOf(name: string | undefined, models: ModelNames): string | null {
  if (name === undefined) return null;
  const resolved = models.resolve(name);
  const problem = resolved.ok ? modelProblem(resolved.id, 'chat') : resolved.message;
  if (!resolved.ok || problem) {
    throw new Error(`Invalid configuration:\n  GATEHOUSE_ARCHITECT_MODEL: ${problem}`);
  }
  if (!models.configured.has(resolved.id.split('/')[0] as string)) {
    throw new Error(
      `Invalid configuration:\n  GATEHOUSE_ARCHITECT_MODEL: ${resolved.id} is served by a provider that is not configured`,
    );
  }
  return resolved.id;
}
