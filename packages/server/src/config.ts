import { existsSync } from 'node:fs';
import path from 'node:path';
import { PLAN_IDS, type PlanId } from '@gatehouse/rules/account';
import { z } from 'zod';
import { PROVIDERS } from './providers/descriptors.ts';

/** An on/off variable, 1/true or 0/false; unset or empty is `unset`. */
const flagUnset = (unset: boolean) =>
  z
    .enum(['0', '1', 'true', 'false', ''])
    .default('')
    .transform((v) => (v === '' ? unset : v === '1' || v === 'true'));
/** Off unless set to 1 or true. */
const flag = flagUnset(false);
/** On unless set to 0 or false. */
const flagOn = flagUnset(true);

/** A comma-separated list of origins (scheme, host, port), each checked to be one. */
function parseOrigins(list: string, ctx: z.RefinementCtx): string[] {
  const origins: string[] = [];
  for (const item of list
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)) {
    const url = URL.canParse(item) ? new URL(item) : null;
    const bare = url && url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
    if (!url || !bare || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
      ctx.addIssue({
        code: 'custom',
        message: `"${item}" is not an origin such as https://console.example.com`,
      });
    } else origins.push(url.origin);
  }
  return origins;
}

/** OTLP over HTTP, JSON or protobuf (gRPC is not supported); empty counts as unset. */
const otlpProtocol = z
  .enum(['http/json', 'http/protobuf', ''], {
    error: 'must be http/json or http/protobuf (gRPC is not supported)',
  })
  .optional()
  .transform((v) => v || undefined);

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  GATEHOUSE_PG_PREPARE: flagOn,
  GATEHOUSE_OPTIMIZE_WASM: flagOn,
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  // Every Redis key and channel of the deployment starts so: deployments may share one Redis.
  GATEHOUSE_REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'must be 1 to 64 letters, digits, or _ . : -')
    .default('gatehouse'),
  // How long a process keeps a gate or an API key in memory; unset: 2 s for gates, 5 s for keys.
  GATEHOUSE_CACHE_TTL_MS: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().int().min(0).max(3_600_000).optional(),
  ),
  // A spending reservation's lease: a dead process's holds are let go within it (and a sixth).
  GATEHOUSE_LEASE_SECONDS: z.coerce.number().int().min(1).max(600).default(30),
  // After Redis restarted empty, block-limited requests wait this long for every process to hold
  // its requests under way again.
  GATEHOUSE_REDIS_FENCE_MS: z.coerce.number().int().min(0).max(60_000).default(3_000),
  GATEHOUSE_OPEN_SIGNUP: flag,
  // Empty counts as unset, as the shell leaves `VAR=` unset in effect.
  GATEHOUSE_DEFAULT_PLAN: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.enum(PLAN_IDS, { error: `must be one of ${PLAN_IDS.join(', ')}` }).default('free'),
  ),
  GATEHOUSE_SECURE_COOKIES: flag,
  GATEHOUSE_SESSION_DAYS: z.coerce.number().int().min(1).max(365).default(14),
  GATEHOUSE_WEB_DIST: z.string().optional(),
  GATEHOUSE_ATTEMPT_TIMEOUT_MS: z.coerce.number().int().min(1).max(600_000).default(30_000),
  // How long one database transaction (a gate's change, a sign-up) may take, lock waits included.
  GATEHOUSE_TRANSACTION_TIMEOUT_MS: z.coerce.number().int().min(10).max(600_000).default(5_000),
  // Video: how long POST /v3/video waits before answering 202 with a job, and how long one
  // attempt (create, poll, download) may take in all.
  GATEHOUSE_ARCHITECT_MODEL: z.string().trim().min(1).max(200).optional(),
  // 0: this process runs no scheduled re-analysis (another process sharing the database may).
  GATEHOUSE_ARCHITECT_INTERVAL_MS: z.coerce
    .number()
    .int()
    .refine((ms) => ms === 0 || (ms >= 1000 && ms <= 86_400_000), 'must be 0 (off) or 1000 to 86400000')
    .default(60_000),
  // Spending alerts to webhooks: the first retry's delay (doubled each time), the attempts in
  // all, how often a process looks for deliveries due, and one attempt's time.
  GATEHOUSE_WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(1).max(3_600_000).default(30_000),
  GATEHOUSE_WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(8),
  GATEHOUSE_WEBHOOK_POLL_MS: z.coerce.number().int().min(10).max(3_600_000).default(5_000),
  GATEHOUSE_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  GATEHOUSE_VIDEO_WAIT_MS: z.coerce.number().int().min(0).max(600_000).default(60_000),
  GATEHOUSE_VIDEO_TIMEOUT_MS: z.coerce.number().int().min(1000).max(3_600_000).default(600_000),
  GATEHOUSE_MAX_CHAT_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(10 * 1024 * 1024),
  // The bytes of a refused request's body its log entry keeps (its JSON text; more is cut, noted).
  GATEHOUSE_LOG_CLIENT_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024)
    .default(256 * 1024),
  GATEHOUSE_MOCK_LATENCY_MS: z.coerce.number().int().min(0).max(60_000).default(0),
  GATEHOUSE_CORS_ORIGINS: z.string().default('').transform(parseOrigins),
  GATEHOUSE_GRAPHQL_INTROSPECTION: flag,
  GATEHOUSE_SIGNIN_ACCOUNT_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(10),
  GATEHOUSE_SIGNIN_ADDRESS_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(100),
  // Unset: 10 times GATEHOUSE_SIGNIN_ACCOUNT_LIMIT.
  GATEHOUSE_SIGNIN_ACCOUNT_WIDE_LIMIT: z.coerce.number().int().min(1).max(10_000_000).optional(),
  GATEHOUSE_SIGNIN_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  GATEHOUSE_SIGNUP_ADDRESS_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(10),
  GATEHOUSE_SIGNUP_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(3600),
  GATEHOUSE_TRUST_PROXY: flag,
  // How long a client may take to send its request (slow clients hold a connection each). Node
  // stops these clocks once the request has arrived, so no answer, however long it streams, is cut.
  GATEHOUSE_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(20_000),
  GATEHOUSE_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  GATEHOUSE_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(65_000),
  // Observability: /metrics' token and gate labels, the process log's format, OTLP traces.
  GATEHOUSE_METRICS_TOKEN: z
    .string()
    .optional()
    .transform((v) => v || undefined),
  GATEHOUSE_METRICS_MAX_GATES: z.coerce.number().int().min(0).max(100_000).default(100),
  GATEHOUSE_LOG_FORMAT: z.enum(['json', 'text', '']).default(''),
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .string()
    .refine(
      (v) => v === '' || (URL.canParse(v) && /^https?:$/.test(new URL(v).protocol)),
      'must be an http:// or https:// URL (traces are sent over OTLP/HTTP)',
    )
    .optional()
    .transform((v) => v || undefined),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol,
  // On SIGTERM: how long the requests in flight (streams included) may take to finish.
  GATEHOUSE_DRAIN_SECONDS: z.coerce.number().int().min(0).max(3600).default(25),
});

/** An http(s) URL; empty counts as unset, as the shell leaves `VAR=` unset in effect. */
const httpUrl = z
  .string()
  .refine(
    (v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol),
    'must be an http:// or https:// URL',
  )
  .optional()
  .or(z.literal('').transform(() => undefined));
const secret = z
  .string()
  .optional()
  .transform((v) => v || undefined);

/** Each provider's `{ID}_API_KEY` and `{ID}_BASE_URL`, from its descriptor. */
const providerEnvSchema = z.object(
  Object.fromEntries(
    PROVIDERS.flatMap((p) =>
      p.env ? [[p.env.apiKey, secret] as const, [p.env.baseUrl, httpUrl] as const] : [],
    ),
  ),
);

export type ProviderSetting = { configured: boolean; apiKey: string | undefined; baseUrl: string };

export type ProviderSettings = {
  providers: Record<string, ProviderSetting>;
  mockLatencyMs: number;
};

function providerSettings(env: Record<string, string | undefined>, mockLatencyMs: number): ProviderSettings {
  const providers: ProviderSettings['providers'] = {};
  for (const p of PROVIDERS) {
    const apiKey = p.env ? env[p.env.apiKey] : undefined;
    const baseUrl = (p.env && env[p.env.baseUrl]) || p.defaultBaseUrl || '';
    const configured = p.needs === 'nothing' || (p.needs === 'key' ? apiKey !== undefined : baseUrl !== '');
    providers[p.id] = { configured, apiKey, baseUrl };
  }
  return { providers, mockLatencyMs };
}

export type Config = {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  /** PGlite's data directory, used when no databaseUrl is set; `memory://` keeps it in memory. */
  dataDir: string;
  databaseUrl: string | undefined;
  /**
   * PostgreSQL: the spending and agent-session statements run on a request's path are named
   * prepared statements, parsed and planned once per connection. Off for a pooler that cannot
   * keep them (PgBouncer in transaction mode without max_prepared_statements).
   */
  preparedStatements: boolean;
  /**
   * Redis, shared by every gateway process: spending reservations, rate limits and change
   * notifications across processes. Unset: one process's memory and PostgreSQL do it all.
   */
  redisUrl: string | undefined;
  /** The start of every Redis key and channel of the deployment. */
  redisPrefix: string;
  /**
   * How long gates and API keys stay in a process's memory (hotCache.ts); undefined: each cache's
   * own (2 s, 5 s). Changes reach every process through notifications (db/changes.ts) well before.
   */
  cacheTtlMs: number | undefined;
  /**
   * Whether V8 may compile hot WebAssembly (PGlite's PostgreSQL, Prisma's query compiler) again
   * with its optimising compiler. Off: the baseline compiler for all but the first function of
   * each module. On Node 24 optimising one of PostgreSQL's functions holds ~450 MB for a moment,
   * soon after start; off, the database thread's CPU a request is ~1.5 times as much.
   */
  optimizeWasm: boolean;
  /** The Redis spending ledger: a reservation's lease, and the fence after Redis restarted empty. */
  redisLedger: { leaseMs: number; fenceMs: number };
  openSignup: boolean;
  /** The plan of every account after the first (the first, the admin's, is enterprise). */
  defaultPlan: PlanId;
  secureCookies: boolean;
  sessionDays: number;
  webDist: string;
  attemptTimeoutMs: number;
  /**
   * A database transaction's time limit, waiting for a locked row included; one that passes it is
   * tried once more, then answered 503 service_unavailable (db/transaction.ts).
   */
  transactionTimeoutMs: number;
  /**
   * The Architect: the chat model that reads gate descriptions (unset: documented rules do), and
   * how often a process looks for gates whose re-analysis is due.
   */
  architect: { model: string | undefined; intervalMs: number };
  /** Spending alerts to webhooks (domain/webhooks.ts): retries, polling, one attempt's time. */
  webhooks: { retryBaseMs: number; maxAttempts: number; pollMs: number; timeoutMs: number };
  /** POST /v3/video answers within this, or 202 with a job; each video attempt's own deadline. */
  video: { waitMs: number; timeoutMs: number };
  maxChatBodyBytes: number;
  /**
   * The bytes of a body its log entry keeps, for a request refused before any provider call
   * (the JSON text; the rest is cut and a note says so).
   */
  logClientBodyBytes: number;
  providers: ProviderSettings;
  /** Origins other than the server's own that may call /graphql with credentials. */
  corsOrigins: string[];
  /** Introspection and field suggestions on /graphql: on outside production, or when asked. */
  graphqlIntrospection: boolean;
  signInLimits: {
    accountFailures: number;
    addressFailures: number;
    accountWideFailures: number;
    windowSeconds: number;
  };
  /** Sign-up attempts one client address may make per window (REST and GraphQL alike). */
  signUpLimits: { addressAttempts: number; windowSeconds: number };
  /** Take the client's address from X-Forwarded-For (its last entry), as a reverse proxy sets it. */
  trustProxy: boolean;
  /** Node's server timeouts: the headers, the whole request (headers and body), an idle connection. */
  http: { headersTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number };
  observability: {
    /** GET /metrics answers only to this Bearer token when set. */
    metricsToken: string | undefined;
    /** Distinct gate ids labelled on /metrics per process; the rest are counted as gate="other". */
    metricsMaxGates: number;
    /** The process log: JSON lines (by default in production) or plain text. */
    logFormat: 'json' | 'text';
    /** OTLP/HTTP traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set; null: no tracing at all. */
    tracing: { endpoint: string; protocol: 'http/json' | 'http/protobuf' } | null;
  };
  /** SIGTERM: the requests in flight get this long to finish before their connections are cut. */
  drainSeconds: number;
};

/** The workspace's root, found from this file in src/ or from the built dist/main.mjs alike. */
function findRepoRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'pnpm-workspace.yaml'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(from, '../../..');
  }
}
const repoRoot = findRepoRoot(import.meta.dirname);

/** Parses the environment once; throws a readable message naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.and(providerEnvSchema).safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  if (e.GATEHOUSE_HEADERS_TIMEOUT_MS > e.GATEHOUSE_REQUEST_TIMEOUT_MS) {
    throw new Error(
      'Invalid configuration:\n  GATEHOUSE_HEADERS_TIMEOUT_MS: must not exceed GATEHOUSE_REQUEST_TIMEOUT_MS (the headers are part of the request)',
    );
  }
  // pnpm runs scripts inside the package; INIT_CWD is where the user typed the command.
  const base = env.INIT_CWD ?? process.cwd();
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    dataDir: e.DATA_DIR.startsWith('memory://') ? e.DATA_DIR : path.resolve(base, e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    preparedStatements: e.GATEHOUSE_PG_PREPARE,
    redisUrl: e.REDIS_URL,
    redisPrefix: e.GATEHOUSE_REDIS_PREFIX,
    cacheTtlMs: e.GATEHOUSE_CACHE_TTL_MS,
    optimizeWasm: e.GATEHOUSE_OPTIMIZE_WASM,
    redisLedger: {
      leaseMs: e.GATEHOUSE_LEASE_SECONDS * 1000,
      fenceMs: e.GATEHOUSE_REDIS_FENCE_MS,
    },
    openSignup: e.GATEHOUSE_OPEN_SIGNUP,
    defaultPlan: e.GATEHOUSE_DEFAULT_PLAN,
    secureCookies: e.GATEHOUSE_SECURE_COOKIES,
    sessionDays: e.GATEHOUSE_SESSION_DAYS,
    webDist: e.GATEHOUSE_WEB_DIST
      ? path.resolve(base, e.GATEHOUSE_WEB_DIST)
      : path.join(repoRoot, 'packages/web/dist'),
    attemptTimeoutMs: e.GATEHOUSE_ATTEMPT_TIMEOUT_MS,
    transactionTimeoutMs: e.GATEHOUSE_TRANSACTION_TIMEOUT_MS,
    architect: { model: e.GATEHOUSE_ARCHITECT_MODEL, intervalMs: e.GATEHOUSE_ARCHITECT_INTERVAL_MS },
    webhooks: {
      retryBaseMs: e.GATEHOUSE_WEBHOOK_RETRY_BASE_MS,
      maxAttempts: e.GATEHOUSE_WEBHOOK_MAX_ATTEMPTS,
      pollMs: e.GATEHOUSE_WEBHOOK_POLL_MS,
      timeoutMs: e.GATEHOUSE_WEBHOOK_TIMEOUT_MS,
    },
    video: { waitMs: e.GATEHOUSE_VIDEO_WAIT_MS, timeoutMs: e.GATEHOUSE_VIDEO_TIMEOUT_MS },
    maxChatBodyBytes: e.GATEHOUSE_MAX_CHAT_BODY_BYTES,
    logClientBodyBytes: e.GATEHOUSE_LOG_CLIENT_BODY_BYTES,
    providers: providerSettings(e as Record<string, string | undefined>, e.GATEHOUSE_MOCK_LATENCY_MS),
    corsOrigins: e.GATEHOUSE_CORS_ORIGINS,
    graphqlIntrospection: e.GATEHOUSE_GRAPHQL_INTROSPECTION || e.NODE_ENV !== 'production',
    signInLimits: {
      accountFailures: e.GATEHOUSE_SIGNIN_ACCOUNT_LIMIT,
      addressFailures: e.GATEHOUSE_SIGNIN_ADDRESS_LIMIT,
      accountWideFailures: e.GATEHOUSE_SIGNIN_ACCOUNT_WIDE_LIMIT ?? 10 * e.GATEHOUSE_SIGNIN_ACCOUNT_LIMIT,
      windowSeconds: e.GATEHOUSE_SIGNIN_WINDOW_SECONDS,
    },
    signUpLimits: {
      addressAttempts: e.GATEHOUSE_SIGNUP_ADDRESS_LIMIT,
      windowSeconds: e.GATEHOUSE_SIGNUP_WINDOW_SECONDS,
    },
    trustProxy: e.GATEHOUSE_TRUST_PROXY,
    http: {
      headersTimeoutMs: e.GATEHOUSE_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.GATEHOUSE_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.GATEHOUSE_KEEP_ALIVE_TIMEOUT_MS,
    },
    observability: {
      metricsToken: e.GATEHOUSE_METRICS_TOKEN,
      metricsMaxGates: e.GATEHOUSE_METRICS_MAX_GATES,
      logFormat: e.GATEHOUSE_LOG_FORMAT || (e.NODE_ENV === 'production' ? 'json' : 'text'),
      tracing: e.OTEL_EXPORTER_OTLP_ENDPOINT
        ? {
            endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
            protocol: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/json',
          }
        : null,
    },
    drainSeconds: e.GATEHOUSE_DRAIN_SECONDS,
  };
}

export const migrationsDir = path.join(repoRoot, 'prisma/migrations');
