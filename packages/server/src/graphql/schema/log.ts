import type { ArgBuilder, SchemaTypes } from '@pothos/core';
import { GraphQLError } from 'graphql';
import { prisma } from '../../db/client.ts';
import { renameIssuePaths, ValidationError } from '../../domain/errors.ts';
import { conversationOf, replayRequestOf } from '../../domain/logConversation.ts';
import {
  encodeCursor,
  type FailuresByClass,
  type GateStats,
  gateStats,
  getLog,
  type LogEntryDetail,
  type LogEntrySummary,
  type LogMediaInfo,
  type LogSummary,
  listLogs,
  logOverview,
  logQuerySchema,
  logSeries,
  logSummary,
  type SpendingBreakdown,
  type SpendingShare,
} from '../../domain/logs.ts';
import { forwardConnection, userInput } from '../arguments.ts';
import { builder } from '../builder.ts';
import { countRows, requireActor } from '../context.ts';
import { FailureClass, LogSeriesBucket, LogStatus } from './enums.ts';

/**
 * The entry with its payloads, which only `log(id)` reads: a listed entry has none, so no page
 * of entries can multiply them (15 aliases of a 200-entry page of 4 MB payloads made a 315 MB
 * answer and 1.37 GB of memory).
 */
function detailOf(entry: LogEntrySummary, field: string): LogEntryDetail {
  if ('attempts' in entry) return entry as LogEntryDetail;
  throw new GraphQLError(
    `${field} is given by log(id) only, not on a list of entries: ask for the entry by its id`,
    {
      extensions: { code: 'BAD_USER_INPUT' },
    },
  );
}

const LogMediaRef = builder.objectRef<LogMediaInfo>('LogMedia').implement({
  description: 'A file a logged answer carried, stored beside its entry and deleted with it',
  fields: (t) => ({
    index: t.exposeInt('index', { description: 'Its place among the answer’s files, from 0' }),
    mimeType: t.exposeString('mimeType'),
    bytes: t.exposeInt('bytes'),
    url: t.exposeString('url', { description: 'GET it (with your credentials) for its bytes' }),
  }),
});

export const LogEntryRef = builder.objectRef<LogEntrySummary>('LogEntry').implement({
  description: 'One request through a gate, as logged',
  fields: (t) => ({
    id: t.exposeID('id'),
    apiKeyId: t.exposeString('apiKeyId', {
      nullable: true,
      description: 'The API key the request came with; null from the dashboard',
    }),
    apiKeyName: t.exposeString('apiKeyName', {
      nullable: true,
      description: 'The key’s name when the request was made',
    }),
    endUser: t.exposeString('endUser', {
      nullable: true,
      description:
        'The end user the request named (x-gatehouse-user, OpenAI’s `user`, Anthropic’s `metadata.user_id`)',
    }),
    gateId: t.exposeString('gateId', { nullable: true }),
    gateName: t.exposeString('gateName', { nullable: true }),
    endpoint: t.exposeString('endpoint'),
    modelRequested: t.exposeString('modelRequested', { nullable: true }),
    modelUsed: t.exposeString('modelUsed', { nullable: true }),
    promptTokens: t.exposeInt('promptTokens'),
    completionTokens: t.exposeInt('completionTokens'),
    totalTokens: t.exposeInt('totalTokens'),
    tokensEstimated: t.exposeBoolean('tokensEstimated'),
    usageNote: t.exposeString('usageNote', {
      nullable: true,
      description:
        "Set when the provider's usage was not believed: what was wrong, and the worst case charged",
    }),
    costUsd: t.exposeFloat('costUsd'),
    latencyMs: t.exposeInt('latencyMs'),
    success: t.exposeBoolean('success'),
    statusCode: t.exposeInt('statusCode'),
    errorCode: t.exposeString('errorCode', { nullable: true }),
    errorMessage: t.exposeString('errorMessage', { nullable: true }),
    sessionId: t.exposeString('sessionId', { nullable: true }),
    inferredAction: t.exposeString('inferredAction', { nullable: true }),
    toolCalls: t.field({ type: 'JSON', nullable: true, resolve: (e) => e.toolCalls }),
    toolResults: t.field({ type: 'JSON', nullable: true, resolve: (e) => e.toolResults }),
    ignoredOverrides: t.exposeStringList('ignoredOverrides'),
    spendingWarning: t.exposeBoolean('spendingWarning'),
    stream: t.exposeBoolean('stream'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    stepInput: t.string({
      nullable: true,
      description:
        'What went in, as text (the last message, or the input); on a session’s requests only, else null',
      resolve: (e) => ('input' in e ? (e.input as string | null) : null),
    }),
    stepOutput: t.string({
      nullable: true,
      description:
        'What came out, as text (the answer, or the tools called); on a session’s requests only, else null',
      resolve: (e) => ('output' in e ? (e.output as string | null) : null),
    }),
    attempts: t.field({
      type: 'JSON',
      description: 'Each model tried: model, provider, ok, status, error, latencyMs (on log(id) only)',
      resolve: (e) => detailOf(e, 'attempts').attempts,
    }),
    metadata: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The metadata sent with the request; on log(id) only',
      resolve: (e) => detailOf(e, 'metadata').metadata,
    }),
    providerRequest: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The exact JSON sent to the provider that answered (or failed last); on log(id) only',
      resolve: (e) => detailOf(e, 'providerRequest').providerRequest,
    }),
    providerResponse: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The provider’s JSON answer; a stream is stored assembled; on log(id) only',
      resolve: (e) => detailOf(e, 'providerResponse').providerResponse,
    }),
    clientRequest: t.field({
      type: 'JSON',
      nullable: true,
      description:
        'What the client sent, on a request refused before any provider call (a bad field, a limit): bounded, files as notes; null otherwise; on log(id) only',
      resolve: (e) => detailOf(e, 'clientRequest').clientRequest,
    }),
    replayOf: t.field({
      type: 'ID',
      nullable: true,
      description: 'The entry this request replayed (sent with x-gatehouse-replay-of); on log(id) only',
      resolve: (e) => detailOf(e, 'replayOf').replayOf,
    }),
    replays: t.field({
      type: ['ID'],
      description: 'The entries that replayed this one, oldest first; on log(id) only',
      resolve: (e) => detailOf(e, 'replays').replays,
    }),
    conversation: t.field({
      type: 'JSON',
      nullable: true,
      description:
        'A chat request as messages (system, user, assistant, tool calls and results) with the answer last, in the native chat shape; null for other types; on log(id) only',
      resolve: (e) => conversationOf(detailOf(e, 'conversation')),
    }),
    replayRequest: t.field({
      type: 'JSON',
      nullable: true,
      description:
        'The native request that sends this one through its gate again, `{ endpoint, data }` (the gate’s own system prompt left out); null where it cannot be rebuilt (a file not kept); on log(id) only',
      resolve: async (e, _args, ctx) => {
        const entry = detailOf(e, 'replayRequest');
        const gate = entry.gateId
          ? await prisma.gate.findFirst({
              where: { id: entry.gateId, userId: requireActor(ctx).user.id },
              select: { systemPrompt: true },
            })
          : null;
        return entry.gateId && gate ? replayRequestOf(entry, gate.systemPrompt) : null;
      },
    }),
    media: t.field({
      type: [LogMediaRef],
      description:
        'The files the answer carried (images, speech), stored apart from the entry; on log(id) only',
      resolve: (e) => detailOf(e, 'media').media,
    }),
  }),
});

const SpendingShareRef = builder.objectRef<SpendingShare>('SpendingShare').implement({
  description: 'One gate’s, model’s, API key’s or end user’s figures over the window',
  fields: (t) => ({
    id: t.exposeString('id', {
      nullable: true,
      description: 'The key’s id or the end user; null for requests with none (a key: the dashboard’s)',
    }),
    name: t.exposeString('name', {
      nullable: true,
      description: 'A gate’s or key’s name, as its newest entry has it',
    }),
    requests: t.exposeInt('requests'),
    errors: t.exposeInt('errors', { description: 'Requests that failed or were refused' }),
    costUsd: t.exposeFloat('costUsd'),
    p50LatencyMs: t.exposeInt('p50LatencyMs', { nullable: true }),
    p95LatencyMs: t.exposeInt('p95LatencyMs', { nullable: true }),
  }),
});

const SpendingOtherRef = builder.objectRef<SpendingBreakdown['other']>('SpendingOther').implement({
  description: 'The gates, models, keys or end users past the top ones, summed',
  fields: (t) => ({
    count: t.exposeInt('count', { description: 'How many they are' }),
    requests: t.exposeInt('requests'),
    errors: t.exposeInt('errors'),
    costUsd: t.exposeFloat('costUsd'),
  }),
});

const SpendingBreakdownRef = builder.objectRef<SpendingBreakdown>('SpendingBreakdown').implement({
  description: 'The top ones over the window, most expensive first, and the rest summed',
  fields: (t) => ({
    top: t.field({ type: [SpendingShareRef], resolve: (b) => b.top }),
    other: t.field({ type: SpendingOtherRef, resolve: (b) => b.other }),
  }),
});

const FailuresByClassRef = builder.objectRef<FailuresByClass>('FailuresByClass').implement({
  description: 'Failed requests by why they failed; the four add up to failedRequests',
  fields: (t) => ({
    providerError: t.int({ description: 'The provider failed', resolve: (f) => f.provider_error }),
    limitRefusal: t.int({ description: 'A spending limit refused', resolve: (f) => f.limit_refusal }),
    rateLimit: t.int({ description: 'A rate limit refused', resolve: (f) => f.rate_limit }),
    clientError: t.int({ description: 'The request was refused as sent', resolve: (f) => f.client_error }),
  }),
});

type Overview = Awaited<ReturnType<typeof logOverview>>;
const OverviewRef = builder.objectRef<Overview>('LogOverview').implement({
  fields: (t) => ({
    totalRequests: t.exposeInt('totalRequests'),
    failedRequests: t.exposeInt('failedRequests'),
    failuresByClass: t.field({ type: FailuresByClassRef, resolve: (o) => o.failuresByClass }),
    totalCostUsd: t.exposeFloat('totalCostUsd'),
    avgLatencyMs: t.exposeInt('avgLatencyMs'),
    p50LatencyMs: t.exposeInt('p50LatencyMs', { nullable: true }),
    p95LatencyMs: t.exposeInt('p95LatencyMs', { nullable: true }),
    activeGates: t.exposeInt('activeGates', {
      description: 'Gates that served at least one request in the window',
    }),
    since: t.expose('since', { type: 'DateTime' }),
    until: t.expose('until', { type: 'DateTime' }),
    recentRequests: t.field({ type: [LogEntryRef], resolve: (o) => o.recentRequests }),
    byGate: t.field({
      type: SpendingBreakdownRef,
      description: 'Requests, errors, cost and latency per gate over the window exactly',
      resolve: (o) => o.byGate,
    }),
    byModel: t.field({
      type: SpendingBreakdownRef,
      description: 'Per model (the one that answered, else the one named) over the window exactly',
      resolve: (o) => o.byModel,
    }),
    spendingByKey: t.field({
      type: SpendingBreakdownRef,
      description:
        'Requests, errors, cost and latency per API key over the window exactly (from the entries)',
      resolve: (o) => o.spendingByKey,
    }),
    spendingByEndUser: t.field({
      type: SpendingBreakdownRef,
      description:
        'Requests, errors, cost and latency per end user over the window exactly (from the entries)',
      resolve: (o) => o.spendingByEndUser,
    }),
  }),
});

type Series = Awaited<ReturnType<typeof logSeries>>;
const PointRef = builder.objectRef<Series['points'][number]>('LogSeriesPoint').implement({
  fields: (t) => ({
    start: t.expose('start', { type: 'DateTime' }),
    requests: t.exposeInt('requests'),
    errors: t.exposeInt('errors'),
    costUsd: t.exposeFloat('costUsd'),
    p50LatencyMs: t.exposeInt('p50LatencyMs', { nullable: true }),
    p95LatencyMs: t.exposeInt('p95LatencyMs', { nullable: true }),
  }),
});
const SeriesRef = builder.objectRef<Series>('LogSeries').implement({
  fields: (t) => ({
    bucket: t.expose('bucket', { type: LogSeriesBucket }),
    since: t.expose('since', { type: 'DateTime' }),
    until: t.expose('until', { type: 'DateTime' }),
    points: t.field({ type: [PointRef], resolve: (s) => s.points }),
  }),
});

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T extends SchemaTypes> ? T : never;

const iso = (d: Date | null | undefined) => d?.toISOString();

/** The log filter as arguments, the same on every field that reads entries. */
function logFilterArgs(arg: ArgBuilder<Types>) {
  return {
    gateId: arg.id(),
    status: arg({ type: LogStatus }),
    sessionId: arg.string({ description: 'The client’s session id (x-gatehouse-session-id)' }),
    apiKeyId: arg.id({ description: 'The API key the requests came with' }),
    endUser: arg.string({ description: 'The end user the requests named' }),
    model: arg.string({ description: 'The model named or the one that answered' }),
    errorCode: arg.string({ description: 'The error code a failed request answered with' }),
    failureClass: arg({
      type: FailureClass,
      description: 'Why requests failed: the provider, a spending limit, a rate limit or the client',
    }),
    endpoint: arg.string({ description: 'The route the requests came to, e.g. /v1/chat/completions' }),
    streamed: arg.boolean({ description: 'Streamed answers only (true) or unstreamed only (false)' }),
    hasToolCalls: arg.boolean({ description: 'Answers that called tools (true) or did not (false)' }),
    metadataKey: arg.string({ description: 'A metadata key the request was sent with' }),
    metadataValue: arg.string({ description: 'Its value, compared as text (needs metadataKey)' }),
    q: arg.string({
      description:
        'Words of the prompt, the answer or the error (web-search syntax: "a phrase", -word, or); entries logged before search existed have none',
    }),
    since: arg({ type: 'DateTime' }),
    until: arg({ type: 'DateTime' }),
  };
}

type LogFilterArgs = {
  gateId?: string | number | null;
  status?: string | null;
  sessionId?: string | null;
  apiKeyId?: string | number | null;
  endUser?: string | null;
  model?: string | null;
  errorCode?: string | null;
  failureClass?: string | null;
  endpoint?: string | null;
  streamed?: boolean | null;
  hasToolCalls?: boolean | null;
  metadataKey?: string | null;
  metadataValue?: string | null;
  q?: string | null;
  since?: Date | null;
  until?: Date | null;
};

/** The arguments given, as the domain's raw filter (the domain's schema checks each). */
function logFilterOf(args: LogFilterArgs) {
  return {
    ...(args.gateId != null && { gateId: String(args.gateId) }),
    ...(args.status && { status: args.status }),
    ...(args.sessionId != null && { sessionId: args.sessionId }),
    ...(args.apiKeyId != null && { apiKeyId: String(args.apiKeyId) }),
    ...(args.endUser != null && { endUser: args.endUser }),
    ...(args.model != null && { model: args.model }),
    ...(args.errorCode != null && { errorCode: args.errorCode }),
    ...(args.failureClass && { failureClass: args.failureClass }),
    ...(args.endpoint != null && { endpoint: args.endpoint }),
    ...(args.streamed != null && { streamed: String(args.streamed) }),
    ...(args.hasToolCalls != null && { hasToolCalls: String(args.hasToolCalls) }),
    ...(args.metadataKey != null && { metadataKey: args.metadataKey }),
    ...(args.metadataValue != null && { metadataValue: args.metadataValue }),
    ...(args.q != null && { q: args.q }),
    ...(args.since && { since: iso(args.since) }),
    ...(args.until && { until: iso(args.until) }),
  };
}

const LogSummaryRef = builder.objectRef<LogSummary>('LogSummary').implement({
  description:
    'How many entries a filter matches, and their cost and tokens: exact up to 10,000 entries, estimated past that',
  fields: (t) => ({
    count: t.exposeInt('count'),
    estimated: t.exposeBoolean('estimated', {
      description:
        'More than 10,000 entries match: the count is the planner’s estimate and the sums scaled to it',
    }),
    costUsd: t.exposeFloat('costUsd'),
    promptTokens: t.exposeFloat('promptTokens'),
    completionTokens: t.exposeFloat('completionTokens'),
    totalTokens: t.exposeFloat('totalTokens'),
  }),
});

/** The overview's and the series' filter: the log filter's gate, model, key, end user and window. */
function overviewArgs(arg: ArgBuilder<Types>) {
  const { gateId, model, apiKeyId, endUser, since, until } = logFilterArgs(arg);
  return { gateId, model, apiKeyId, endUser, since, until };
}

function overviewFilterOf(args: LogFilterArgs) {
  const { gateId, model, apiKeyId, endUser, since, until } = logFilterOf(args);
  return {
    ...(gateId && { gateId }),
    ...(model !== undefined && { model }),
    ...(apiKeyId && { apiKeyId }),
    ...(endUser !== undefined && { endUser }),
    ...(since && { since }),
    ...(until && { until }),
  };
}

const GateStatsRef = builder.objectRef<GateStats>('GateStats').implement({
  description: 'One gate’s figures over a window',
  fields: (t) => ({
    gateId: t.exposeID('gateId'),
    requests: t.exposeInt('requests'),
    errors: t.exposeInt('errors', { description: 'Requests that failed or were refused' }),
    costUsd: t.exposeFloat('costUsd'),
    p50LatencyMs: t.exposeInt('p50LatencyMs', { nullable: true }),
    p95LatencyMs: t.exposeInt('p95LatencyMs', { nullable: true }),
  }),
});

builder.queryFields((t) => ({
  logSummary: t.field({
    type: LogSummaryRef,
    description: 'How many of your entries the filter matches, with their cost and tokens',
    args: logFilterArgs(t.arg),
    resolve: (_root, args, ctx) => userInput(() => logSummary(requireActor(ctx).user.id, logFilterOf(args))),
  }),
  logs: t.connection({
    type: LogEntryRef,
    description: 'Your log entries, newest first',
    args: logFilterArgs(t.arg),
    resolve: (_root, args, ctx) =>
      userInput(async () => {
        // Newest first, forward only: `last`/`before` would otherwise be ignored without a word.
        const backward = (['last', 'before'] as const).filter((arg) => args[arg] != null);
        if (backward.length > 0) {
          throw new ValidationError(
            backward.map((arg) => ({
              path: arg,
              message: 'paging backwards is not supported; use first and after',
            })),
          );
        }
        const rows = logQuerySchema.shape.limit.safeParse(args.first ?? undefined);
        if (rows.success) countRows(ctx, rows.data); // else listLogs names the bad value
        const page = await listLogs(requireActor(ctx).user.id, {
          ...(args.first != null && { limit: args.first }),
          ...(args.after && { cursor: args.after }),
          ...logFilterOf(args),
        }).catch((error) => {
          // The rule names REST's parameters; here they are the connection's arguments.
          throw renameIssuePaths(error, { cursor: 'after', limit: 'first' });
        });
        return forwardConnection(page, (node) => encodeCursor(node.createdAt, node.id), args.after);
      }),
  }),
  log: t.field({
    type: LogEntryRef,
    nullable: true,
    description: 'One of your log entries, with its payloads, or null',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      try {
        return await getLog(requireActor(ctx).user.id, String(args.id));
      } catch (error) {
        if ((error as { code?: string }).code === 'not_found') return null;
        throw error;
      }
    },
  }),
  overview: t.field({
    type: OverviewRef,
    description: 'Totals over a window (default: the last 30 days), by gate, model, API key or end user',
    args: overviewArgs(t.arg),
    resolve: (_root, args, ctx) =>
      userInput(() => logOverview(requireActor(ctx).user.id, overviewFilterOf(args))),
  }),
  logSeries: t.field({
    type: SeriesRef,
    description: 'Requests, errors, cost and p50/p95 latency per hour or day, for the charts',
    args: {
      ...overviewArgs(t.arg),
      bucket: t.arg({
        type: LogSeriesBucket,
        description: 'Default: HOUR for windows up to 3 days, else DAY',
      }),
    },
    resolve: (_root, args, ctx) =>
      userInput(() =>
        logSeries(requireActor(ctx).user.id, {
          ...overviewFilterOf(args),
          ...(args.bucket && { bucket: args.bucket }),
        }),
      ),
  }),
  gateStats: t.field({
    type: [GateStatsRef],
    description:
      'Requests, errors, cost and p50/p95 latency of the gates named (or every gate with traffic) over a window (default: the last 24 hours), in one query',
    args: {
      gateIds: t.arg.idList(),
      since: t.arg({ type: 'DateTime' }),
      until: t.arg({ type: 'DateTime' }),
    },
    resolve: (_root, args, ctx) =>
      userInput(() =>
        gateStats(requireActor(ctx).user.id, {
          ...(args.gateIds && { gateIds: args.gateIds.map(String) }),
          ...(args.since && { since: iso(args.since) }),
          ...(args.until && { until: iso(args.until) }),
        }),
      ),
  }),
}));
