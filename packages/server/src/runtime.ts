import type { Config } from './config.ts';
import { createDataPlane, type DataPlane } from './dataplane/chat.ts';
import { createLogWriter, type LogWriter } from './dataplane/logWriter.ts';
import { createSpendingAccumulator } from './dataplane/spending.ts';
import { createProviderRegistry } from './providers/registry.ts';

/** The long-lived parts of the data plane; close() flushes what they still hold. */
export type Runtime = { dataPlane: DataPlane; logs: LogWriter; close(): Promise<void> };

export function createRuntime(config: Config, opts: { random?: () => number } = {}): Runtime {
  const logs = createLogWriter();
  const spending = createSpendingAccumulator();
  const dataPlane = createDataPlane({
    providers: createProviderRegistry(config.providers),
    logs,
    spending,
    attemptTimeoutMs: config.attemptTimeoutMs,
    ...(opts.random && { random: opts.random }),
  });
  return {
    dataPlane,
    logs,
    close: async () => {
      await spending.close();
      await logs.close();
    },
  };
}
