/**
 * The process's Prometheus metrics (prom-client): one registry with Node's default metrics, and
 * the gateway's own instruments. Requests are recorded in one place, from the log entry the
 * pipeline finalises (recordRequest), so every figure agrees with the log.
 *
 * Label values are ours, never a client's text: routes are the gateway's endpoints, models and
 * providers come from the catalog, outcomes and reasons from closed sets, and gates are gate ids,
 * at most `maxGates` distinct ones per process (the rest are counted as gate="other"), and API
 * keys are key ids, capped the same way, on counters of their own (route × gate × model × key
 * would multiply the series).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Attempt } from '../dataplane/attempts.ts';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

/**
 * What became of a request, a closed set: `success`; `client_error` (the request was refused
 * for itself: a bad field, an unknown gate, a provider's 400); `spending_refused` (a block limit,
 * or spending that could not be checked); `rate_limited` (the gateway's own rate limit);
 * `provider_error` (no model answered: errors, timeouts, every model rate-limited upstream);
 * `gateway_error` (a failure inside the gateway).
 */
export const OUTCOMES = [
  'success',
  'client_error',
  'spending_refused',
  'rate_limited',
  'provider_error',
  'gateway_error',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

/**
 * Distinct gate ids labelled per process unless GATEHOUSE_METRICS_MAX_GATES says otherwise; as
 * many API key ids.
 */
export const DEFAULT_MAX_GATES = 100;
let maxGates = DEFAULT_MAX_GATES;
const gatesSeen = new Set<string>();
const keysSeen = new Set<string>();

export function configureMetrics(opts: { maxGates: number }): void {
  maxGates = opts.maxGates;
}

/** The id itself while the process has labelled fewer than maxGates of its kind; "other" past that. */
function cappedLabel(seen: Set<string>, id: string | null | undefined): string {
  if (id === null || id === undefined) return 'none';
  if (seen.has(id)) return id;
  if (seen.size >= maxGates) return 'other';
  seen.add(id);
  return id;
}

/** The gate's own id while the process has labelled fewer than maxGates; "other" past that. */
export const gateLabel = (gateId: string | null): string => cappedLabel(gatesSeen, gateId);

/** The API key's id (never its secret), capped as gates are; "none" for a dashboard request. */
export const keyLabel = (apiKeyId: string | null | undefined): string => cappedLabel(keysSeen, apiKeyId);

// Seconds, from a few milliseconds (a cached answer, a refusal) to minutes (a long stream).
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const ROUND_TRIP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * A counter summed here, per label set, and handed to prom-client when /metrics is read (its
 * collect): prom-client builds and hashes a key from a label object and checks its names on every
 * inc, and a request counts up to six times. Here the key is the label values joined, in
 * labelNames' order; the label object is made once per set.
 */
function summedCounter<L extends string>(opts: { name: string; help: string; labelNames: readonly L[] }) {
  const sums = new Map<string, { labels: Partial<Record<L, string>>; value: number }>();
  new Counter({
    ...opts,
    registers: [registry],
    collect() {
      this.reset();
      for (const { labels, value } of sums.values()) this.inc(labels, value);
    },
  });
  return {
    inc(values: readonly string[], by = 1): void {
      // As prom-client's own inc: a counter only grows, by a finite amount.
      if (!Number.isFinite(by) || by < 0) throw new TypeError(`${opts.name}: not a valid increment: ${by}`);
      const key = values.join('\u0000');
      const sum = sums.get(key);
      if (sum) sum.value += by;
      else
        sums.set(key, {
          labels: Object.fromEntries(opts.labelNames.map((n, i) => [n, values[i]])) as Partial<
            Record<L, string>
          >,
          value: by,
        });
    },
  };
}

const requests = summedCounter({
  name: 'gatehouse_requests_total',
  help: 'Requests through a gate (one per log entry), by route, gate, model that answered (or was last tried; "none" before any), provider and outcome.',
  labelNames: ['route', 'gate', 'model', 'provider', 'outcome'] as const,
});
const duration = new Histogram({
  name: 'gatehouse_request_duration_seconds',
  help: "A request's time in the gateway, from the gate's check to its log entry (a stream's last byte included), by route and outcome.",
  labelNames: ['route', 'outcome'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});
const upstream = new Histogram({
  name: 'gatehouse_upstream_duration_seconds',
  help: 'One attempt at a provider, by provider, model and result (ok or error).',
  labelNames: ['provider', 'model', 'result'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});
const tokens = summedCounter({
  name: 'gatehouse_tokens_total',
  help: 'Tokens of answered requests, by gate, model and type (input or output).',
  labelNames: ['gate', 'model', 'type'] as const,
});
const cost = summedCounter({
  name: 'gatehouse_cost_usd_total',
  help: 'What requests cost in USD (failed attempts a provider may have billed included), by gate and model.',
  labelNames: ['gate', 'model'] as const,
});
const refusals = summedCounter({
  name: 'gatehouse_refusals_total',
  help: 'Requests the gateway refused before or between attempts, by gate and reason: spending_limit_exceeded, spending_unavailable, rate_limited.',
  labelNames: ['gate', 'reason'] as const,
});
const keyRequests = summedCounter({
  name: 'gatehouse_key_requests_total',
  help: 'Requests through a gate by the API key they came with (its id; "none" from the dashboard, "other" past the cap) and outcome.',
  labelNames: ['key', 'outcome'] as const,
});
const keyCost = summedCounter({
  name: 'gatehouse_key_cost_usd_total',
  help: 'What requests cost in USD, by the API key they came with.',
  labelNames: ['key'] as const,
});
const fallbacks = summedCounter({
  name: 'gatehouse_fallbacks_total',
  help: 'Attempts made at another model after one failed, by gate.',
  labelNames: ['gate'] as const,
});
export const dbRoundTrip = new Histogram({
  name: 'gatehouse_db_round_trip_seconds',
  help: 'One database statement, from the call to its result, by client: sql (the statements of the request path and the log writer) or prisma (the rest).',
  labelNames: ['client'] as const,
  buckets: ROUND_TRIP_BUCKETS,
  registers: [registry],
});
export const redisRoundTrip = new Histogram({
  name: 'gatehouse_redis_round_trip_seconds',
  help: 'One Redis command, from the call to its reply, by command (only with REDIS_URL).',
  labelNames: ['command'] as const,
  buckets: ROUND_TRIP_BUCKETS,
  registers: [registry],
});

/** What a log entry tells about its request (the fields of LogEntryData recordRequest reads). */
export type FinishedRequest = {
  endpoint: string;
  gateId: string | null;
  apiKeyId?: string | null;
  modelUsed?: string | null;
  success: boolean;
  statusCode: number;
  errorCode?: string | null;
  promptTokens?: number;
  completionTokens?: number;
  costUsd?: number;
  latencyMs: number;
  attempts: unknown;
};

const SPENDING_REFUSALS = new Set([
  'spending_limit_exceeded',
  'key_spending_limit',
  'session_budget_exceeded',
  'spending_unavailable',
]);
const PROVIDER_FAILURES = new Set(['upstream_error', 'upstream_timeout', 'rate_limited']);

/** `unexpected`: the request failed on an error of the gateway's own (a bug, not a refusal). */
export function outcomeOf(entry: FinishedRequest, unexpected: boolean): Outcome {
  if (entry.success) return 'success';
  if (unexpected) return 'gateway_error';
  const code = entry.errorCode ?? '';
  if (SPENDING_REFUSALS.has(code)) return 'spending_refused';
  const attempted = (entry.attempts as Attempt[]).length > 0;
  if (code === 'rate_limited' && !attempted) return 'rate_limited';
  if (PROVIDER_FAILURES.has(code)) return 'provider_error';
  return entry.statusCode >= 500 ? 'gateway_error' : 'client_error';
}

/** Counts one finished request: called once per log entry, as the pipeline writes it. */
export function recordRequest(entry: FinishedRequest, unexpected = false): Outcome {
  const outcome = outcomeOf(entry, unexpected);
  const attempts = entry.attempts as Attempt[];
  const last = attempts.at(-1);
  const model = entry.modelUsed ?? last?.model ?? 'none';
  const provider = attempts.find((a) => a.model === model)?.provider ?? last?.provider ?? 'none';
  const gate = gateLabel(entry.gateId);
  requests.inc([entry.endpoint, gate, model, provider, outcome]);
  const key = keyLabel(entry.apiKeyId);
  keyRequests.inc([key, outcome]);
  if (entry.costUsd) keyCost.inc([key], entry.costUsd);
  duration.observe({ route: entry.endpoint, outcome }, entry.latencyMs / 1000);
  for (const a of attempts) {
    upstream.observe(
      { provider: a.provider, model: a.model, result: a.ok ? 'ok' : 'error' },
      a.latencyMs / 1000,
    );
  }
  if (attempts.length > 1) fallbacks.inc([gate], attempts.length - 1);
  if (entry.promptTokens) tokens.inc([gate, model, 'input'], entry.promptTokens);
  if (entry.completionTokens) tokens.inc([gate, model, 'output'], entry.completionTokens);
  if (entry.costUsd) cost.inc([gate, model], entry.costUsd);
  if (outcome === 'spending_refused' || outcome === 'rate_limited') {
    refusals.inc([gate, entry.errorCode as string]);
  }
  return outcome;
}

/** A gauge or counter whose value is read from elsewhere when /metrics is asked. */
export function readGauge(name: string, help: string, labelNames: string[] = []) {
  return new Gauge({ name, help, labelNames, registers: [registry] });
}

/**
 * A counter kept elsewhere (the log writer's), set to its current value, per label set, when
 * /metrics is asked: it only ever grows where it is kept.
 */
export function readCounter(name: string, help: string, labelNames: string[] = []) {
  const counter = new Counter({ name, help, labelNames, registers: [registry] });
  return {
    set(value: number | [labels: Record<string, string>, value: number][]) {
      counter.reset();
      if (typeof value === 'number') counter.inc(value);
      else for (const [labels, n] of value) counter.inc(labels, n);
    },
  };
}

/** Times one database or Redis round trip into `histogram`. */
export function timed<T>(
  histogram: Histogram<string>,
  labels: Record<string, string>,
  run: () => Promise<T>,
): Promise<T> {
  const end = histogram.startTimer(labels);
  const p = run();
  p.then(
    () => end(),
    () => end(),
  );
  return p;
}
