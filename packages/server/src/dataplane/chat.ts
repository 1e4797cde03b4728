/**
 * One chat request through a gate: merge, reserve, route across models, check structured
 * output, count tokens and cost, settle spending, log. Knows nothing of HTTP: the endpoints
 * parse the wire format and write the answer.
 */
import { randomUUID } from 'node:crypto';
import { type AllowOverrides, overrideAllowed, type TaskType } from '@gatehouse/rules/gate';
import { findModel, type ModelNames, modelProblem } from '../domain/catalog.ts';
import { DomainError, HTTP_STATUS, ValidationError } from '../domain/errors.ts';
import type { Gate } from '../generated/prisma/client.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import {
  type ChatCompletion,
  type ChatParams,
  ProviderError,
  type StreamDelta,
  type Usage,
} from '../providers/types.ts';
import { costOf, estimateUsage, withOutputCap, worstCaseCost } from './cost.ts';
import type { Reservation, SpendingLedger } from './ledger.ts';
import type { LogEntryData, LogWriter } from './logWriter.ts';
import { mergeRequest } from './merge.ts';
import type { ChatRequest } from './request.ts';
import { attemptOrder, type RoutingStrategy } from './routing.ts';
import { formatViolation, schemaProblem, withInjectedFormat } from './structured.ts';

export type Attempt = {
  model: string;
  provider: string;
  ok: boolean;
  status: number | null;
  error: string | null;
  latencyMs: number;
  /** What a failed attempt is charged (see failedAttemptCost); absent on the one that answered. */
  costUsd?: number;
};

export type ChatOutcome = {
  id: string;
  modelUsed: string;
  completion: ChatCompletion;
  usage: Usage;
  tokensEstimated: boolean;
  costUsd: number;
  latencyMs: number;
  ignoredOverrides: string[];
  /** An alert_only limit is reached: the response says so in a header. */
  spendingWarning: boolean;
  attempts: Attempt[];
};

export type ChatCaller = { userId: string; endpoint: string };

export type StreamStart = { id: string; model: string; ignoredOverrides: string[] };

export type ChatHooks = {
  /** Streams the answer; called before the outcome is known, once the first byte is decided. */
  onDelta?: (delta: StreamDelta) => void;
  /** Called once the answering model's stream begins (headers can still be set before it). */
  onStreamStart?: (info: StreamStart) => void;
  signal?: AbortSignal;
};

/** An attempt-level failure the caller reads as an error of its endpoint. */
export class ChatFailure extends DomainError {
  constructor(
    code: ConstructorParameters<typeof DomainError>[0],
    message: string,
    readonly attempts: Attempt[],
  ) {
    super(code, message, { attempts });
  }
}

export type DataPlaneDeps = {
  providers: ProviderRegistry;
  models: ModelNames;
  logs: LogWriter;
  ledger: SpendingLedger;
  attemptTimeoutMs: number;
  random?: () => number;
};

const providerOf = (model: string) => findModel(model)?.provider ?? model.split('/')[0] ?? 'unknown';

function failureFor(error: ProviderError, attempts: Attempt[]): ChatFailure {
  if (error.kind === 'content_policy') {
    return new ChatFailure(
      'invalid_request',
      `The provider refused on content policy: ${error.message}`,
      attempts,
    );
  }
  if (error.kind === 'timeout')
    return new ChatFailure('upstream_timeout', 'No model answered in time', attempts);
  if (error.kind === 'http' && (error.status === 400 || error.status === 422)) {
    return new ChatFailure('invalid_request', error.message, attempts);
  }
  if (error.kind === 'http' && error.status === 429) {
    return new ChatFailure('rate_limited', `Every model is rate-limited: ${error.message}`, attempts);
  }
  const tried = attempts.map((a) => `${a.model}: ${a.error}`).join('; ');
  return new ChatFailure('upstream_error', `No model could answer (${tried})`, attempts);
}

/** What the gate makes of a request: the parameters sent, and the models to try in order. */
type Plan = { params: ChatParams; order: string[]; ignoredOverrides: string[] };

/** The gate merge, checked: a bad schema or a model the gate's task type cannot use is a 400. */
function planFor(gate: Gate, request: ChatRequest, deps: DataPlaneDeps): Plan {
  if (gate.taskType !== 'chat') {
    throw new ValidationError([
      {
        path: 'gateId',
        message: `gate "${gate.name}" is a ${gate.taskType} gate; chat requests need a chat gate`,
      },
    ]);
  }
  const allowOverrides = gate.allowOverrides as AllowOverrides;
  const merged = mergeRequest(
    {
      ...gate,
      allowOverrides,
      responseFormatSchema: gate.responseFormatSchema as Record<string, unknown> | null,
    },
    withModelResolved(request, gate.model, allowOverrides, deps.models),
  );
  const badSchema = schemaProblem(merged.params.responseFormat);
  if (badSchema) throw new ValidationError([{ path: 'responseFormat', message: badSchema }]);
  if (merged.model !== gate.model) {
    const problem = modelProblem(merged.model, gate.taskType as TaskType);
    if (problem) throw new ValidationError([{ path: 'model', message: problem }]);
  }
  const order = attemptOrder(
    gate.routingStrategy as RoutingStrategy,
    merged.model,
    gate.fallbackModels,
    deps.random ?? Math.random,
  );
  return { params: merged.params, order, ignoredOverrides: merged.ignoredOverrides };
}

/**
 * The client's model as a `provider/model` id (it may write `gpt-4o-mini`), so naming the
 * gate's own model plainly overrides nothing. A name that cannot be resolved is a 400 only where
 * the gate would use it; where the gate ignores model overrides, it is ignored like any other.
 */
function withModelResolved(
  request: ChatRequest,
  gateModel: string,
  allowOverrides: AllowOverrides,
  models: ModelNames,
): ChatRequest {
  if (request.model === undefined || request.model === gateModel) return request;
  const resolved = models.resolve(request.model);
  if (resolved.ok) return { ...request, model: resolved.id };
  if (!overrideAllowed(allowOverrides, 'model')) return request;
  throw new ValidationError([{ path: 'model', message: resolved.message }]);
}

const isBlocking = (gate: Gate) => gate.spendingEnforcement === 'block' && gate.spendingLimit !== null;

/** Everything a request's log entry is made of, gathered as the request goes. */
type Trace = {
  id: string;
  started: number;
  caller: ChatCaller;
  gate: Gate;
  request?: ChatRequest;
  attempts: Attempt[];
  ignoredOverrides: string[];
  lastError: ProviderError | null;
  /** What the failed attempts were charged (failedAttemptCost). */
  failedCostUsd: number;
};

type LogFields = {
  success: boolean;
  statusCode: number;
  modelUsed?: string | null;
  outcome?: Omit<ChatOutcome, 'id' | 'attempts' | 'ignoredOverrides' | 'latencyMs'> & {
    spendingCrossed: boolean;
  };
  error?: DomainError;
  /** A failed request's cost: what its attempts were charged. */
  costUsd?: number;
};

function logEntryOf(t: Trace, fields: LogFields): LogEntryData {
  const { request, gate } = t;
  const completion = fields.outcome?.completion;
  const toolResults = request?.messages
    .filter((m) => m.role === 'tool')
    .map((m) => ({ tool_call_id: (m as { tool_call_id: string }).tool_call_id, content: m.content }));
  return {
    id: t.id,
    userId: t.caller.userId,
    gateId: gate.id,
    gateName: gate.name,
    endpoint: t.caller.endpoint,
    modelRequested: request?.model ?? gate.model,
    modelUsed: fields.modelUsed ?? null,
    promptTokens: fields.outcome?.usage.promptTokens ?? 0,
    completionTokens: fields.outcome?.usage.completionTokens ?? 0,
    tokensEstimated: fields.outcome?.tokensEstimated ?? false,
    costUsd: fields.outcome?.costUsd ?? fields.costUsd ?? 0,
    latencyMs: Math.round(performance.now() - t.started),
    success: fields.success,
    statusCode: fields.statusCode,
    errorCode: fields.error?.code ?? null,
    errorMessage: fields.error?.message ?? null,
    sessionId: request?.sessionId ?? null,
    toolCalls: completion?.toolCalls.length ? (completion.toolCalls as never) : undefined,
    toolResults: toolResults?.length ? (toolResults as never) : undefined,
    attempts: t.attempts as never,
    ignoredOverrides: t.ignoredOverrides,
    spendingWarning: fields.outcome?.spendingCrossed ?? false,
    stream: request?.stream ?? false,
    metadata: (request?.metadata as never) ?? undefined,
    providerRequest: (completion?.providerRequest ?? t.lastError?.providerRequest ?? undefined) as never,
    providerResponse: (completion?.providerResponse ?? t.lastError?.providerResponse ?? undefined) as never,
    createdAt: new Date(),
  };
}

/**
 * One signal for both ends of an attempt: its deadline and the client going away
 * (AbortSignal.any would do the same at several times the cost, on every request).
 */
function attemptSignal(timeoutMs: number, client: AbortSignal | undefined) {
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new DOMException('The provider did not answer in time', 'TimeoutError')),
    timeoutMs,
  );
  const onClientGone = () => deadline.abort(client?.reason);
  if (client?.aborted) onClientGone();
  else client?.addEventListener('abort', onClientGone, { once: true });
  return {
    signal: deadline.signal,
    /** A stream that has begun may run as long as the model writes. */
    answering: () => clearTimeout(timer),
    done: () => {
      clearTimeout(timer);
      client?.removeEventListener('abort', onClientGone);
    },
  };
}

async function attempt(
  deps: DataPlaneDeps,
  model: string,
  params: ChatParams,
  hooks: ChatHooks,
  emit: { started: boolean },
  info: StreamStart,
): Promise<ChatCompletion> {
  const catalogModel = findModel(model);
  const provider = catalogModel?.provider ?? providerOf(model);
  const adapter = deps.providers.adapter(provider);
  if (!catalogModel || !adapter) {
    throw new ProviderError('not_configured', `Provider "${provider}" is not configured`);
  }
  const format = params.responseFormat;
  const native =
    !format || format.type === 'text' || deps.providers.nativeResponseFormat(provider, format.type);
  const sent = withInjectedFormat(params, native);
  // The attempt must answer (or, streamed, start answering) within the timeout.
  const timing = attemptSignal(deps.attemptTimeoutMs, hooks.signal);
  // With a JSON contract the answer is checked before any of it reaches the client.
  const buffered: StreamDelta[] = [];
  const onDelta = hooks.onDelta
    ? (delta: StreamDelta) => {
        timing.answering();
        if (format) return void buffered.push(delta);
        if (!emit.started) {
          emit.started = true;
          hooks.onStreamStart?.(info);
        }
        hooks.onDelta?.(delta);
      }
    : undefined;
  const completion = await adapter
    .chat(catalogModel.providerModel, sent, { signal: timing.signal, ...(onDelta && { onDelta }) })
    .finally(timing.done);
  const violation = formatViolation(format, completion.content);
  if (violation) {
    const error = new ProviderError('invalid_response', violation, null, completion.providerResponse);
    error.providerRequest = completion.providerRequest;
    error.usage = completion.usage ?? (await estimateUsage(sent, completion));
    throw error;
  }
  if (hooks.onDelta && buffered.length > 0) {
    emit.started = true;
    hooks.onStreamStart?.(info);
    for (const delta of buffered) hooks.onDelta(delta);
  }
  return completion;
}

/**
 * What a failed attempt may have cost. Nothing when the provider refused it (an error status is
 * not billed) or was never reached; what it reported when it answered and the answer was refused
 * here (a broken JSON contract); otherwise (timed out, cut off, left by the client) the provider
 * may have billed it in full, so its worst case: a block limit must hold against that too.
 */
function failedAttemptCost(failure: ProviderError, model: string, params: ChatParams): number {
  if (failure.kind === 'http' || failure.kind === 'content_policy' || failure.kind === 'not_configured')
    return 0;
  if (failure.unreached) return 0;
  if (failure.usage) return costOf(model, failure.usage);
  return worstCaseCost([model], params);
}

/**
 * Tries the models in order until one answers, recording each attempt (and what a failed one
 * cost) in the trace. `beforeAttempt` runs before each model is called: a block gate reserves
 * there what the attempts so far and this one may cost.
 */
async function routeAttempts(
  deps: DataPlaneDeps,
  t: Trace,
  plan: Plan,
  hooks: ChatHooks,
  beforeAttempt: (model: string) => Promise<void>,
) {
  const emit = { started: false };
  for (const model of plan.order) {
    await beforeAttempt(model);
    const t0 = performance.now();
    try {
      const completion = await attempt(deps, model, plan.params, hooks, emit, {
        id: t.id,
        model,
        ignoredOverrides: t.ignoredOverrides,
      });
      const latencyMs = Math.round(performance.now() - t0);
      t.attempts.push({ model, provider: providerOf(model), ok: true, status: 200, error: null, latencyMs });
      return { completion, modelUsed: model };
    } catch (error) {
      const failure =
        error instanceof ProviderError
          ? error
          : new ProviderError('network', (error as Error).message ?? String(error));
      t.lastError = failure;
      const costUsd = failedAttemptCost(failure, model, plan.params);
      t.failedCostUsd += costUsd;
      t.attempts.push({
        model,
        provider: providerOf(model),
        ok: false,
        status: failure.status,
        error: failure.message,
        latencyMs: Math.round(performance.now() - t0),
        costUsd,
      });
      // A stream can change model only until its first byte has gone to the client.
      if (!failure.retryable || emit.started || hooks.signal?.aborted) break;
    }
  }
  throw failureFor(t.lastError as ProviderError, t.attempts);
}

function spendingLimitReached(gate: Gate): DomainError {
  return new DomainError(
    'spending_limit_exceeded',
    `Gate "${gate.name}" has reached its ${gate.spendingLimitPeriod} spending limit of $${Number(gate.spendingLimit)}; raise or lift the limit, or wait for the period to reset`,
  );
}

/**
 * A block gate's reservations for one request. The first covers the worst case of any one
 * attempt; before a fallback, when failed attempts were charged, more is reserved so that what
 * they cost plus the next attempt's worst case is covered, or the request stops with a 402.
 */
function reservationsFor(deps: DataPlaneDeps, gate: Gate, t: Trace, plan: Plan) {
  const held: Reservation[] = [];
  let reserved = 0;
  async function reserve(amount: number) {
    const reservation = await deps.ledger.reserve(gate.id, amount);
    if (!reservation) throw spendingLimitReached(gate);
    held.push(reservation);
    reserved += amount;
  }
  return {
    held,
    first: () => reserve(worstCaseCost(plan.order, plan.params)),
    beforeAttempt: async (model: string) => {
      // Nothing charged yet: the first reservation covers any one attempt already.
      if (t.failedCostUsd === 0) return;
      const needed = t.failedCostUsd + worstCaseCost([model], plan.params);
      if (needed > reserved) await reserve(needed - reserved);
    },
  };
}

/**
 * Records what a request cost (its answer and any failed attempts): settles its reservations, or
 * adds the cost to a gate without a block limit. The cost was paid: failing to record it is
 * reported, never turned into an error for the client (nor into a second settlement at zero).
 */
async function recordSpending(deps: DataPlaneDeps, gate: Gate, held: Reservation[], costUsd: number) {
  try {
    if (held.length > 0) {
      await Promise.all(held.map((r, i) => deps.ledger.settle(r, i === 0 ? costUsd : 0)));
    } else if (costUsd > 0 || gate.spendingLimit !== null) {
      const s = await deps.ledger.add(gate.id, costUsd, gate.spendingLimit !== null);
      return { spendingWarning: s.overLimit, spendingCrossed: s.crossed };
    }
  } catch (error) {
    console.error('spending: could not record', costUsd, 'USD for gate', gate.id, error);
  }
  return { spendingWarning: false, spendingCrossed: false };
}

/**
 * Runs a chat request through `gate`. `parse` turns the raw body into a ChatRequest and may
 * throw a ValidationError: every failure once the gate is known is logged against it.
 */
async function chat(
  deps: DataPlaneDeps,
  caller: ChatCaller,
  gate: Gate,
  parse: () => ChatRequest,
  hooks: ChatHooks = {},
) {
  const t: Trace = {
    id: randomUUID(),
    started: performance.now(),
    caller,
    gate,
    attempts: [],
    ignoredOverrides: [],
    lastError: null,
    failedCostUsd: 0,
  };
  let held: Reservation[] = [];
  let recorded = false;
  try {
    t.request = parse();
    const plan = planFor(gate, t.request, deps);
    t.ignoredOverrides = plan.ignoredOverrides;
    let beforeAttempt = async (_model: string) => {};
    if (isBlocking(gate)) {
      // The reservation assumes an output cap: the provider must be held to the same one.
      plan.params = withOutputCap(plan.params);
      const reservations = reservationsFor(deps, gate, t, plan);
      held = reservations.held;
      await reservations.first();
      beforeAttempt = reservations.beforeAttempt;
    }
    const { completion, modelUsed } = await routeAttempts(deps, t, plan, hooks, beforeAttempt);
    const reported = completion.usage;
    const usage = reported ?? (await estimateUsage(plan.params, completion));
    const costUsd = costOf(modelUsed, usage) + t.failedCostUsd;
    recorded = true;
    const { spendingWarning, spendingCrossed } = await recordSpending(deps, gate, held, costUsd);

    const outcome: ChatOutcome = {
      id: t.id,
      modelUsed,
      completion,
      usage,
      tokensEstimated: reported === null,
      costUsd,
      latencyMs: Math.round(performance.now() - t.started),
      ignoredOverrides: t.ignoredOverrides,
      spendingWarning,
      attempts: t.attempts,
    };
    await deps.logs.add(
      logEntryOf(t, {
        success: true,
        statusCode: 200,
        modelUsed,
        outcome: { ...outcome, spendingCrossed },
      }),
    );
    return outcome;
  } catch (error) {
    // Failed attempts the provider may have billed count against the gate like an answer.
    if (!recorded && (held.length > 0 || t.failedCostUsd > 0)) {
      await recordSpending(deps, gate, held, t.failedCostUsd);
    }
    const domainError =
      error instanceof DomainError
        ? error
        : new ChatFailure('upstream_error', 'The request failed inside the gateway', t.attempts);
    if (!(error instanceof DomainError)) console.error('chat: unexpected failure', error);
    await deps.logs.add(
      logEntryOf(t, {
        success: false,
        statusCode: HTTP_STATUS[domainError.code],
        error: domainError,
        costUsd: t.failedCostUsd,
      }),
    );
    throw domainError;
  }
}

/** The chat data plane over its long-lived parts (providers, log writer, ledger). */
export function createDataPlane(deps: DataPlaneDeps) {
  return {
    chat: (caller: ChatCaller, gate: Gate, parse: () => ChatRequest, hooks?: ChatHooks) =>
      chat(deps, caller, gate, parse, hooks),
  };
}

export type DataPlane = ReturnType<typeof createDataPlane>;
