/**
 * The process log (what the server prints, not the request log in the database). The code
 * prints through `console`; with GATEHOUSE_LOG_FORMAT=json (the default in production) each
 * line becomes one JSON object written by pino: `level`, `time`, `pid`, `msg`, an `err` with the
 * error's type, message and stack when one was printed, and the `requestId` of the request the
 * line was printed for (the id its answer carries and its log entry has), where there is one.
 *
 * The request's id is kept in an AsyncLocalStorage, entered only in JSON mode and only on Node 24
 * and later, where it rides V8's AsyncContextFrame at no measurable cost. Before 24 it hooks every
 * promise: the request thread's CPU a request was a fifth higher with it (Node 20, PGlite, wrk c32,
 * two rounds: 878 / 827 µs against 682 / 672 in text mode; Node 24: 447 against 511), so there
 * JSON lines carry no requestId.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { format } from 'node:util';
import type { MiddlewareHandler } from 'hono';
import { pino } from 'pino';

type RequestScope = { requestId?: string };
let scope: AsyncLocalStorage<RequestScope> | null = null;

/** Names the request the current work is for (the pipeline calls it with the log entry's id). */
export function tagRequest(id: string): void {
  const store = scope?.getStore();
  if (store) store.requestId = id;
}

/** Where the request ids come from in JSON mode: every request runs in a scope of its own. */
export const requestScope: MiddlewareHandler = (_c, next) => (scope ? scope.run({}, next) : next());

const LEVELS = { log: 'info', info: 'info', warn: 'warn', error: 'error', debug: 'debug' } as const;

/**
 * Turns `console`'s lines into JSON lines on stdout, synchronously (a line printed just before
 * the process exits is not lost). Arguments are joined as console joins them; the first Error
 * among them goes into `err` rather than into the message.
 */
/** Whether this Node keeps async context without a hook on every promise (AsyncContextFrame, Node 24+). */
export const requestIdsInProcessLog = Number(process.versions.node.split('.')[0]) >= 24;

export function useJsonProcessLog(): void {
  scope = requestIdsInProcessLog ? new AsyncLocalStorage<RequestScope>() : null;
  const logger = pino(
    {
      base: { pid: process.pid },
      level: 'debug',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => {
        const requestId = scope?.getStore()?.requestId;
        return requestId ? { requestId } : {};
      },
    },
    pino.destination({ dest: 1, sync: true }),
  );
  for (const [method, level] of Object.entries(LEVELS)) {
    (console as unknown as Record<string, (...args: unknown[]) => void>)[method] = (...args: unknown[]) => {
      const at = args.findIndex((a) => a instanceof Error);
      const err = at >= 0 ? args[at] : undefined;
      const msg = format(...(at >= 0 ? args.filter((_, i) => i !== at) : args));
      if (err) logger[level]({ err }, msg);
      else logger[level](msg);
    };
  }
}
