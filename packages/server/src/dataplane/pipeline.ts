/**
 * The request pipeline every task type shares: check the gate's task type, merge the gate's
 * settings with the request, reserve spending on a block gate, try the models in the gate's
 * order with fallback, cost the answer, settle, log. A task type is a TaskKind: how its request
 * is merged, what one attempt costs at worst, how an attempt runs, and what its answer cost.
 * Knows nothing of HTTP: the endpoints parse their wire format and write the answer.
 */
import { randomUUID } from 'node:crypto';
import { isSessionKey } from '@gatehouse/rules/agent';
import { type AllowOverrides, overrideAllowed, type TaskType } from '@gatehouse/rules/gate';
import { checkKeyScope } from '../domain/apiKeyScope.ts';
import { type CatalogModel, findModel, type ModelNames, modelProblem } from '../domain/catalog.ts';
import { DomainError, HTTP_STATUS, ValidationError } from '../domain/errors.ts';
import type { Gate } from '../generated/prisma/client.ts';
import { tagRequest } from '../observability/processLog.ts';
import { requestEnded } from '../observability/requests.ts';
import { answerAttributes, genAiOperation, genAiProvider, inSpan } from '../observability/tracing.ts';
import type { ProviderConnection, ProviderRegistry } from '../providers/registry.ts';
import { ProviderError, type Usage } from '../providers/types.ts';
import { type AgentRoute, type RolePicker, routeAgent } from './agent.ts';
import { type AnswerShape, type Attempt, type BilledUnits, shapeChange } from './attempts.ts';
import type { TaskCaller } from './caller.ts';
import { CLIENT_BODY_BYTES, loggedClientBody } from './clientBody.ts';
import { costOf } from './cost.ts';
import type { SpendingLedger } from './ledger.ts';
import { chargeAll, type Hold, type LimitScope, limits, reserveAll, scopesOf } from './limits.ts';
import type { LogEntryData, LogWriter } from './logWriter.ts';
import { type RateAdmission, type RateLimits, rateLimitedOf } from './rateLimits.ts';
import { attemptOrder, type RoutingStrategy } from './routing.ts';
import { noteRefusal, type OpenSession, sessionFor, settleSession } from './sessions.ts';
import { checkedUsage, InvalidUsage, invalidUsageNote, MAX_USD, recordableUsd } from './usage.ts';

export type { Attempt };

/** What every task type's request may carry besides its own fields. */
export type TaskRequestBase = {
  model?: string | undefined;
  sessionId?: string | undefined;
  /** The step an orchestrated agent gate is asked for (a /v3 body's twin of x-gatehouse-action). */
  action?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
};

/** A file an answer carries (an image, speech, a video): stored beside its log entry, never in it. */
export type MediaItem = { mimeType: string; data: Buffer };

/**
 * What every answer carries: the exact JSON exchanged with the provider, for the log (with any
 * media in it replaced by a note naming its type and size), and the media themselves.
 */
export type TaskAnswerBase = { providerRequest: unknown; providerResponse: unknown; media?: MediaItem[] };

/** An attempt-level failure the caller reads as an error of its endpoint. */
export class TaskFailure extends DomainError {
  constructor(
    code: ConstructorParameters<typeof DomainError>[0],
    message: string,
    readonly attempts: Attempt[],
  ) {
    super(code, message, { attempts });
  }
}

export type PipelineDeps = {
  providers: ProviderRegistry;
  models: ModelNames;
  logs: LogWriter;
  ledger: SpendingLedger;
  rateLimits: RateLimits;
  attemptTimeoutMs: number;
  random?: () => number;
  /** Dynamic orchestration's router (chat.ts), where agent gates may pick a role by model. */
  pickRole?: RolePicker;
  /** The bytes of a refused request's body its entry keeps (GATEHOUSE_LOG_CLIENT_BODY_BYTES). */
  clientBodyBytes?: number;
  /**
   * Told of each gate a request took over its alert_only limit (once per period); sends the alert
   * off the request's path (domain/webhooks.ts): it must not wait, nor throw.
   */
  spendingCrossed?: (crossed: { gate: Gate; spent: number; entryId: string }) => void;
};

/** The time one attempt has, and the client's leaving: one signal for both. */
export type AttemptTiming = {
  signal: AbortSignal;
  /** A stream that has begun may run as long as the model writes: its deadline is lifted. */
  answering(): void;
};

/** What the pipeline hands one attempt. */
export type AttemptInput<Params> = {
  id: string;
  /** The `provider/model` id tried. */
  modelId: string;
  model: CatalogModel;
  params: Params;
  timing: AttemptTiming;
  deps: PipelineDeps;
  /** Agent gates: the sub-gate role answering, known before the answer (orchestrated). */
  action: string | null;
};

/** What an answer cost, and the token counts the log keeps (0 where a type has none). */
export type Priced = {
  usage: Usage;
  tokensEstimated: boolean;
  costUsd: number;
  /** What was billed, where it is not tokens (images, seconds, characters, pages). */
  billed?: BilledUnits;
};

export type Merged<Params> = {
  params: Params;
  /** The model to try first: the gate's primary, or the client's where permitted. */
  model: string;
  ignoredOverrides: string[];
};

/** A task type, as the pipeline runs it. */
export type TaskKind<Request extends TaskRequestBase, Params, Answer extends TaskAnswerBase> = {
  taskType: TaskType;
  /** The request a gate of this type expects, in words: "chat requests need a chat gate". */
  noun: string;
  /** The gate's settings and the request combined into what is sent. */
  merge(gate: Gate, request: Request): Merged<Params>;
  /** On a block gate: what is sent, held to what the reservation assumes (chat's output cap). */
  bounded?(params: Params): Params;
  /**
   * The most one attempt at any of `models` (`provider/model` ids) may cost, in USD: what a block
   * gate reserves. An upper bound, never an estimate: a limit holds only if no bill exceeds it.
   */
  worstCase(models: string[], params: Params): number;
  /** The prompt's tokens, counted against a tokens-per-minute limit at admission (absent: none). */
  promptTokens?(params: Params): number | Promise<number>;
  /** One attempt; throws ProviderError. */
  attempt(input: AttemptInput<Params>): Promise<Answer>;
  /** What the answer cost; throws InvalidUsage (usage.ts) on a figure no bill can have. */
  price(model: CatalogModel, modelId: string, params: Params, answer: Answer): Promise<Priced> | Priced;
  /** The answer's own fields in its log entry (tool calls, media references, ...). */
  logFields?(request: Request, answer: Answer | undefined): Partial<LogEntryData>;
  /** Agent gates: the request with only the `visible` tools, and the names of those it hid. */
  restrictTools?(request: Request, visible: string[]): { request: Request; hidden: string[] };
  /**
   * The answer's shape where a client builds on it (embeddings: its vectors' length), and what
   * `primary` (the model the request was meant for) gives for the same params: an answer by
   * another model in another shape is noted in its log entry and a response header.
   */
  shapeOf?(answer: Answer, params: Params, primary: string): AnswerShape;
  /** Agent sessions: the tool calls an answer makes. */
  toolCallsOf?(answer: Answer): { name: string; arguments: string }[];
  /** Agent sessions: what the request is about (chat: its first user message). */
  topicOf?(request: Request): string | null;
  /** Dynamic orchestration: the conversation the router reads (chat: its messages). */
  conversationOf?(request: Request): unknown;
};

/** A request made by the pipeline itself as one step of an agent session (the router's). */
export type AgentStep = { session: OpenSession | null; action: string };

export type TaskOutcome<Answer> = {
  id: string;
  modelUsed: string;
  answer: Answer;
  usage: Usage;
  tokensEstimated: boolean;
  costUsd: number;
  latencyMs: number;
  ignoredOverrides: string[];
  /** An alert_only limit is reached: the response says so in a header. */
  spendingWarning: boolean;
  attempts: Attempt[];
  /** Agent gates: the step that answered (the sub-gate's role, or the tool called, or `respond`). */
  action?: string | null;
  /** Agent gates: the session's status once this request settled. */
  sessionStatus?: string;
  /** The provider's usage was not believed: what was wrong, and what was charged instead. */
  usageNote?: string;
  /** A fallback answered in another shape than the primary gives: "dimensions 1536 -> 3072". */
  shapeNote?: string;
};

export const providerOf = (model: string) => findModel(model)?.provider ?? model.split('/')[0] ?? 'unknown';

function failureFor(error: ProviderError, attempts: Attempt[]): TaskFailure {
  if (error.kind === 'content_policy') {
    return new TaskFailure(
      'invalid_request',
      `The provider refused on content policy: ${error.message}`,
      attempts,
    );
  }
  if (error.kind === 'timeout')
    return new TaskFailure('upstream_timeout', 'No model answered in time', attempts);
  if (error.kind === 'http' && (error.status === 400 || error.status === 422)) {
    return new TaskFailure('invalid_request', error.message, attempts);
  }
  if (error.kind === 'http' && error.status === 429) {
    return new TaskFailure('rate_limited', `Every model is rate-limited: ${error.message}`, attempts);
  }
  const tried = attempts.map((a) => `${a.model}: ${a.error}`).join('; ');
  return new TaskFailure('upstream_error', `No model could answer (${tried})`, attempts);
}

/**
 * A `model` that names the gate rather than a model: its id, its name, `gatehouse/<name or id>`,
 * or the word `gate` (what the README's SDK example sends, since the SDKs require a model). It
 * asks for nothing the gate does not do, so it is no override.
 */
export function namesGate(model: string, gate: Pick<Gate, 'id' | 'name'>): boolean {
  const name = model.startsWith('gatehouse/') ? model.slice('gatehouse/'.length) : model;
  return name === 'gate' || name === gate.name || name.toLowerCase() === gate.id;
}

/**
 * The client's model as a `provider/model` id (it may write `gpt-4o-mini`), so naming the
 * gate's own model plainly overrides nothing. A name that cannot be resolved is a 400 only where
 * the gate would use it; where the gate ignores model overrides, it is ignored like any other.
 */
function withModelResolved<R extends TaskRequestBase>(request: R, gate: Gate, models: ModelNames): R {
  if (request.model === undefined || request.model === gate.model) return request;
  if (namesGate(request.model, gate)) return { ...request, model: undefined };
  const resolved = models.resolve(request.model);
  if (resolved.ok) return { ...request, model: resolved.id };
  if (!overrideAllowed(gate.allowOverrides as AllowOverrides, 'model')) return request;
  throw new ValidationError([{ path: 'model', message: resolved.message }]);
}

/**
 * The gate merge of a task type whose only override is the model: the client's model where the
 * gate permits one (the gate's own model named again overrides nothing), else the gate's.
 */
export function mergeModel(
  gate: Gate,
  request: TaskRequestBase,
): { model: string; ignoredOverrides: string[] } {
  if (request.model === undefined || request.model === gate.model) {
    return { model: gate.model, ignoredOverrides: [] };
  }
  if (overrideAllowed(gate.allowOverrides as AllowOverrides, 'model')) {
    return { model: request.model, ignoredOverrides: [] };
  }
  return { model: gate.model, ignoredOverrides: ['model'] };
}

/** The connection of the provider an attempt goes to (the pipeline checked it is configured). */
export function connectionFor(input: AttemptInput<unknown>): ProviderConnection {
  const conn = input.deps.providers.connection(input.model.provider);
  if (!conn)
    throw new ProviderError('not_configured', `Provider "${input.model.provider}" is not configured`);
  return conn;
}

const article = (word: string) => (/^[aeiou]/.test(word) ? 'an' : 'a');

/** What the gate makes of a request: the parameters sent, and the models to try in order. */
type Plan<Params> = {
  params: Params;
  /** The model the request is meant for: the gate's primary, or the client's where permitted. */
  primary: string;
  order: string[];
  ignoredOverrides: string[];
};

function planFor<R extends TaskRequestBase, P, A extends TaskAnswerBase>(
  kind: TaskKind<R, P, A>,
  gate: Gate,
  request: R,
  deps: PipelineDeps,
): Plan<P> {
  if (gate.taskType !== kind.taskType) {
    throw new ValidationError([
      {
        path: 'gateId',
        message: `gate "${gate.name}" is ${article(gate.taskType)} ${gate.taskType} gate; ${kind.noun} requests need ${article(kind.taskType)} ${kind.taskType} gate`,
      },
    ]);
  }
  const merged = kind.merge(gate, withModelResolved(request, gate, deps.models));
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
  return { params: merged.params, primary: merged.model, order, ignoredOverrides: merged.ignoredOverrides };
}

/** Everything a request's log entry is made of, gathered as the request goes. */
type Trace<R> = {
  id: string;
  started: number;
  caller: TaskCaller;
  gate: Gate;
  request?: R;
  attempts: Attempt[];
  ignoredOverrides: string[];
  lastError: ProviderError | null;
  /** What the failed attempts were charged (failedAttemptCost). */
  failedCostUsd: number;
  /** Agent gates: the session, the step that answered, the tools kept from the model. */
  session: OpenSession | null;
  action: string | null;
  hiddenTools: string[];
};

type LogFields<A> = {
  success: boolean;
  statusCode: number;
  modelUsed?: string | null;
  outcome?: Omit<TaskOutcome<A>, 'id' | 'attempts' | 'ignoredOverrides' | 'latencyMs'> & {
    spendingCrossed: boolean;
  };
  error?: DomainError;
  /** A failed request's cost: what its attempts were charged. */
  costUsd?: number;
};

function logEntryOf<R extends TaskRequestBase, P, A extends TaskAnswerBase>(
  deps: PipelineDeps,
  kind: TaskKind<R, P, A>,
  t: Trace<R>,
  fields: LogFields<A>,
): LogEntryData {
  const { request, gate } = t;
  const answer = fields.outcome?.answer;
  const providerRequest = answer?.providerRequest ?? t.lastError?.providerRequest ?? undefined;
  // Refused before any provider call (a bad field, a limit): nothing sent to show, so what the
  // client sent instead. Only then: an answered request's row stays as small as it was.
  const refused = !fields.success && providerRequest === undefined && t.caller.body !== undefined;
  // One shape for every entry, its optional fields undefined rather than spread in: an object
  // literal of conditional spreads is built property by property, on every request.
  const entry: LogEntryData = {
    id: t.id,
    userId: t.caller.userId,
    apiKeyId: t.caller.apiKey?.id ?? null,
    apiKeyName: t.caller.apiKey?.name ?? null,
    endUser: t.caller.endUser ?? null,
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
    sessionId: t.caller.sessionKey ?? request?.sessionId ?? null,
    attempts: t.attempts as never,
    ignoredOverrides: t.ignoredOverrides,
    spendingWarning: fields.outcome?.spendingCrossed ?? false,
    usageNote: fields.outcome?.usageNote ?? null,
    metadata: (request?.metadata as never) ?? undefined,
    providerRequest: providerRequest as never,
    providerResponse: (answer?.providerResponse ?? t.lastError?.providerResponse ?? undefined) as never,
    gateSessionId: t.session?.id,
    inferredAction: t.action ?? undefined,
    hiddenTools: t.hiddenTools.length > 0 ? t.hiddenTools : undefined,
    replayOf: t.caller.replayOf || undefined,
    clientRequest: refused
      ? (loggedClientBody(t.caller.body, {
          maxBytes: deps.clientBodyBytes ?? CLIENT_BODY_BYTES,
          redact: deps.providers.redact,
        }) as never)
      : undefined,
    createdAt: new Date(),
  };
  const own = request && kind.logFields?.(request, answer);
  return own ? Object.assign(entry, own) : entry;
}

/**
 * The session a request refused before routing names (the header's key, or a parsed /v3 body's
 * sessionId), opened if it is new; null without a valid key, or when it cannot be read.
 */
async function refusedInSession<R extends TaskRequestBase>(gate: Gate, t: Trace<R>) {
  const key = t.caller.sessionKey ?? t.request?.sessionId;
  if (!isSessionKey(key)) return null;
  return sessionFor(gate, t.caller.userId, key, null).catch((e) => {
    console.error('session: could not open for a refused request', gate.id, e);
    return null;
  });
}

/**
 * One signal for both ends of an attempt: its deadline and the client going away
 * (AbortSignal.any would do the same at several times the cost, on every request).
 */
function attemptSignal(timeoutMs: number, client: Leaving | undefined) {
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
    answering: () => clearTimeout(timer),
    done: () => {
      clearTimeout(timer);
      client?.removeEventListener('abort', onClientGone);
    },
  };
}

/**
 * What a failed attempt may have cost. Nothing when the provider refused it (an error status is
 * not billed) or was never reached; what it reported when it answered and the answer was refused
 * here (a broken JSON contract); otherwise (timed out, cut off, left by the client) the provider
 * may have billed it in full, so its worst case: a block limit must hold against that too.
 */
function failedAttemptCost<P>(
  kind: { worstCase(models: string[], params: P): number },
  failure: ProviderError,
  model: string,
  params: P,
): { costUsd: number; upperBound: boolean } {
  if (failure.kind === 'http' || failure.kind === 'content_policy' || failure.kind === 'not_configured')
    return { costUsd: 0, upperBound: false };
  if (failure.unreached) return { costUsd: 0, upperBound: false };
  if (failure.usage) {
    try {
      return { costUsd: recordableUsd(costOf(model, checkedUsage(failure.usage))), upperBound: false };
    } catch (error) {
      if (!(error instanceof InvalidUsage)) throw error;
    }
  }
  return { costUsd: recordableUsd(kind.worstCase([model], params)), upperBound: true };
}

/**
 * What an answer cost, its usage checked first (usage.ts): an answer reporting usage no bill
 * can have is charged the worst case of the model that answered (what a block gate reserved for
 * it; the same bound where nothing was reserved) and noted. An estimate (no usage reported) is
 * ours, not the provider's: where a reservation bounds the request, it is held to it.
 */
async function pricedAnswer<R extends TaskRequestBase, P, A extends TaskAnswerBase>(
  kind: TaskKind<R, P, A>,
  model: CatalogModel,
  modelId: string,
  params: P,
  answer: A,
  reserved: boolean,
): Promise<Priced & { usageNote?: string; upperBound?: boolean }> {
  try {
    const priced = await kind.price(model, modelId, params, answer);
    const usage = checkedUsage(priced.usage);
    const cost = priced.costUsd;
    if (!Number.isFinite(cost) || cost < 0 || cost > MAX_USD) {
      throw new InvalidUsage([`the answer's figures came to $${cost}`]);
    }
    const costUsd =
      priced.tokensEstimated && reserved ? Math.min(cost, kind.worstCase([modelId], params)) : cost;
    return { ...priced, usage, costUsd };
  } catch (error) {
    if (!(error instanceof InvalidUsage)) throw error;
    const costUsd = recordableUsd(kind.worstCase([modelId], params));
    console.error(`${kind.taskType}: ${modelId} answered with ${error.message}`);
    return {
      usage: { promptTokens: 0, completionTokens: 0 },
      tokensEstimated: false,
      costUsd,
      usageNote: invalidUsageNote(error, costUsd),
      upperBound: true,
    };
  }
}

/**
 * The answering attempt's own charge and, where tokens are not what was billed, what was; its
 * shape, where the type has one, and the note when it is not the shape the primary gives.
 */
function answeredAttempt(
  attempts: Attempt[],
  priced: Priced & { upperBound?: boolean },
  shape: { dimensions: number; note: string | null } | null,
): void {
  const answered = attempts.at(-1);
  if (!answered?.ok) return;
  answered.costUsd = recordableUsd(priced.costUsd);
  if (priced.upperBound) answered.costUpperBound = true;
  if (priced.billed) answered.billed = priced.billed;
  if (shape) answered.dimensions = shape.dimensions;
  if (shape?.note) answered.shapeNote = shape.note;
}

/** The answer's shape, and how it differs from the primary's when another model answered. */
function shapeOfAnswer<P, A>(
  kind: { shapeOf?(answer: A, params: P, primary: string): AnswerShape },
  plan: Plan<P>,
  answer: A,
  modelUsed: string,
): { dimensions: number; note: string | null } | null {
  const shape = kind.shapeOf?.(answer, plan.params, plan.primary);
  if (!shape) return null;
  return { dimensions: shape.dimensions, note: modelUsed === plan.primary ? null : shapeChange(shape) };
}

/**
 * The client's going away, as the data plane listens for it: an AbortSignal is one. Under the Node
 * server the routes pass a lighter one (http/errors.ts clientSignal): on Node 20 an AbortController
 * costs ~2.7 µs to make (0.06 µs on Node 24), and each request made two.
 */
export type Leaving = {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
};

/** What the attempts hear from the caller: the client leaving, and whether an answer is under way. */
export type RouteControl = {
  signal?: Leaving | undefined;
  /** True once part of the answer reached the client: no other model may take over then. */
  committed?: () => boolean;
  /** The request's id, where the caller must know it before the run ends (a video job's). */
  id?: string;
  /** Each attempt's deadline, where the type's attempts run longer than GATEHOUSE_ATTEMPT_TIMEOUT_MS (video). */
  attemptTimeoutMs?: number;
};

/**
 * Tries the models in order until one answers, recording each attempt (and what a failed one
 * cost) in the trace. `beforeAttempt` runs before each model is called: a block gate reserves
 * there what the attempts so far and this one may cost.
 */
async function routeAttempts<R extends TaskRequestBase, P, A extends TaskAnswerBase>(
  kind: TaskKind<R, P, A>,
  deps: PipelineDeps,
  t: Trace<R>,
  plan: Plan<P>,
  control: RouteControl,
  beforeAttempt: (model: string) => Promise<void>,
) {
  for (const modelId of plan.order) {
    await beforeAttempt(modelId);
    const t0 = performance.now();
    const attempt = { 'gatehouse.attempt': t.attempts.length + 1, 'gen_ai.request.model': modelId };
    try {
      return await inSpan('gatehouse.attempt', attempt, async () => {
        const model = findModel(modelId);
        const provider = model?.provider ?? providerOf(modelId);
        if (!model || !deps.providers.configured.has(provider)) {
          throw new ProviderError('not_configured', `Provider "${provider}" is not configured`);
        }
        const timing = attemptSignal(control.attemptTimeoutMs ?? deps.attemptTimeoutMs, control.signal);
        const answer = await inSpan(
          `${genAiOperation(kind.taskType)} ${model.providerModel}`,
          {
            'gen_ai.operation.name': genAiOperation(kind.taskType),
            'gen_ai.provider.name': genAiProvider(provider),
            'gen_ai.request.model': model.providerModel,
          },
          async (span) => {
            const answer = await kind
              .attempt({ id: t.id, modelId, model, params: plan.params, timing, deps, action: t.action })
              .finally(timing.done);
            span?.setAttributes({
              'gen_ai.response.model': model.providerModel,
              ...answerAttributes(answer),
            });
            return answer;
          },
          'client',
        );
        const latencyMs = Math.round(performance.now() - t0);
        t.attempts.push({ model: modelId, provider, ok: true, status: 200, error: null, latencyMs });
        return { answer, modelUsed: modelId, model };
      });
    } catch (error) {
      const failure =
        error instanceof ProviderError
          ? error
          : new ProviderError('network', (error as Error).message ?? String(error));
      t.lastError = failure;
      const { costUsd, upperBound } = failedAttemptCost(kind, failure, modelId, plan.params);
      t.failedCostUsd += costUsd;
      t.attempts.push({
        model: modelId,
        provider: providerOf(modelId),
        ok: false,
        status: failure.status,
        error: failure.message,
        latencyMs: Math.round(performance.now() - t0),
        costUsd,
        ...(upperBound && costUsd > 0 && { costUpperBound: true }),
      });
      // A stream can change model only until its first byte has gone to the client.
      if (!failure.retryable || control.committed?.() || control.signal?.aborted) break;
    }
  }
  throw failureFor(t.lastError as ProviderError, t.attempts);
}

/**
 * A request's reservations over the limits it passes through. The first covers the worst case of
 * any one attempt; before a fallback, when failed attempts were charged, more is reserved so that
 * what they cost plus the next attempt's worst case is covered, or the request stops with a 402.
 */
function reservationsFor<R extends TaskRequestBase, P, A extends TaskAnswerBase>(
  kind: TaskKind<R, P, A>,
  deps: PipelineDeps,
  scopes: LimitScope[],
  t: Trace<R>,
  plan: Plan<P>,
) {
  const held: Hold[] = [];
  let reserved = 0;
  async function reserve(amount: number) {
    const holds = await inSpan('gatehouse.reservation', { 'gatehouse.reservation.usd': amount }, () =>
      reserveAll(deps.ledger, scopes, amount),
    );
    held.push(...holds);
    reserved += amount;
  }
  return {
    held,
    first: () => reserve(kind.worstCase(plan.order, plan.params)),
    beforeAttempt: async (model: string) => {
      // Nothing charged yet: the first reservation covers any one attempt already.
      if (t.failedCostUsd === 0) return;
      const needed = t.failedCostUsd + kind.worstCase([model], plan.params);
      if (needed > reserved) await reserve(needed - reserved);
    },
  };
}

/**
 * Runs one request of `kind` through `gate`. `parse` turns the raw body into the type's request
 * and may throw a ValidationError: every failure once the gate is known is logged against it.
 * On an agent gate the request joins its session and may be answered by a sub-gate (agent.ts);
 * `step` marks a request the pipeline makes itself within a session (the dynamic router's).
 */
export async function runTask<R extends TaskRequestBase, P, A extends TaskAnswerBase>(
  deps: PipelineDeps,
  kind: TaskKind<R, P, A>,
  caller: TaskCaller,
  gate: Gate,
  parse: () => R,
  control: RouteControl = {},
  step?: AgentStep,
): Promise<TaskOutcome<A>> {
  const t: Trace<R> = {
    id: control.id ?? randomUUID(),
    started: performance.now(),
    caller,
    gate,
    attempts: [],
    ignoredOverrides: [],
    lastError: null,
    failedCostUsd: 0,
    session: step?.session ?? null,
    action: step?.action ?? null,
    hiddenTools: [],
  };
  if (!step) tagRequest(t.id);
  let held: Hold[] = [];
  let rate: RateAdmission | null = null;
  // Until the request is routed, only the gate asked: a failure before routing charges it.
  let scopes: LimitScope[] = scopesOf(gate, gate, null, null);
  let recorded = false;
  let role: string | null = null;
  try {
    // The key's scope first: a gate or task type it may not use learns nothing of the body.
    if (!step && caller.apiKey) checkKeyScope(caller.apiKey, gate.id, kind.taskType);
    t.request = parse();
    let request = t.request;
    if (!step && gate.gateType === 'agent') {
      const route: AgentRoute = await routeAgent(gate, caller, request, {
        topic: kind.topicOf?.(request) ?? null,
        conversation: kind.conversationOf?.(request),
        pickRole: kind.conversationOf && deps.pickRole ? deps.pickRole : null,
      });
      t.session = route.session;
      t.gate = route.answering;
      role = route.role;
      t.action = route.role;
      if (route.visibleTools && kind.restrictTools) {
        const restricted = kind.restrictTools(request, route.visibleTools);
        request = restricted.request;
        t.hiddenTools = restricted.hidden;
      }
    }
    const answering = t.gate;
    scopes = scopesOf(gate, answering, role, t.session, { apiKey: caller.apiKey, endUser: caller.endUser });
    const plan = planFor(kind, answering, request, deps);
    t.ignoredOverrides = plan.ignoredOverrides;
    let beforeAttempt = async (_model: string) => {};
    const reserving = scopes.some(limits);
    if (reserving && kind.bounded) plan.params = kind.bounded(plan.params);
    // The pipeline's own steps (the router's) were admitted with the request they serve.
    if (!step) {
      const limited = rateLimitedOf(scopes, caller.apiKey);
      rate = await deps.rateLimits.admit(limited, () => kind.promptTokens?.(plan.params) ?? 0);
    }
    if (reserving) {
      const reservations = reservationsFor(kind, deps, scopes, t, plan);
      held = reservations.held;
      await reservations.first();
      beforeAttempt = reservations.beforeAttempt;
    }
    const { answer, modelUsed, model } = await routeAttempts(kind, deps, t, plan, control, beforeAttempt);
    const priced = await pricedAnswer(kind, model, modelUsed, plan.params, answer, reserving);
    const costUsd = recordableUsd(priced.costUsd + t.failedCostUsd);
    const shape = shapeOfAnswer(kind, plan, answer, modelUsed);
    answeredAttempt(t.attempts, priced, shape);
    recorded = true;
    const { spendingWarning, spendingCrossed, crossings } = await chargeAll(
      deps.ledger,
      scopes,
      held,
      costUsd,
    );
    for (const c of crossings) deps.spendingCrossed?.({ ...c, entryId: t.id });
    await rate?.settle(priced.usage);
    const calls = kind.toolCallsOf?.(answer) ?? [];
    // Observability: the step is what the answer does, a tool it calls or a reply.
    if (gate.gateType === 'agent' && t.action === null) t.action = calls[0]?.name ?? 'respond';
    let sessionStatus: string | undefined;
    if (t.session) {
      sessionStatus = await settleSession(t.session, {
        costUsd,
        promptTokens: priced.usage.promptTokens,
        completionTokens: priced.usage.completionTokens,
        tools: [...new Set(calls.map((c) => c.name))],
        toolCallKey: calls.length > 0 ? JSON.stringify(calls.map((c) => [c.name, c.arguments])) : null,
        role,
      });
    }

    const outcome: TaskOutcome<A> = {
      id: t.id,
      modelUsed,
      answer,
      usage: priced.usage,
      tokensEstimated: priced.tokensEstimated,
      costUsd,
      latencyMs: Math.round(performance.now() - t.started),
      ignoredOverrides: t.ignoredOverrides,
      spendingWarning,
      attempts: t.attempts,
      ...(gate.gateType === 'agent' && { action: t.action }),
      ...(sessionStatus !== undefined && { sessionStatus }),
      ...(priced.usageNote !== undefined && { usageNote: priced.usageNote }),
      ...(shape?.note && { shapeNote: shape.note }),
    };
    const entry = logEntryOf(deps, kind, t, {
      success: true,
      statusCode: 200,
      modelUsed,
      outcome: { ...outcome, spendingCrossed },
    });
    requestEnded(entry, { taskType: kind.taskType, unexpected: false, nested: step !== undefined });
    await deps.logs.add(entry, answer.media);
    return outcome;
  } catch (error) {
    // Failed attempts the provider may have billed count against the gate like an answer.
    if (!recorded && (held.length > 0 || t.failedCostUsd > 0)) {
      const { crossings } = await chargeAll(deps.ledger, scopes, held, t.failedCostUsd);
      for (const c of crossings) deps.spendingCrossed?.({ ...c, entryId: t.id });
    }
    // Tokens a provider never read are given back; one that read the prompt keeps it counted.
    if (t.attempts.length === 0) await rate?.settle({ promptTokens: 0, completionTokens: 0 });
    // An agent gate's request refused before it joined its session (a bad body, an unknown step,
    // a spent budget) still belongs to it: the session shows every request, refused ones included.
    if (!step && !t.session && gate.gateType === 'agent') t.session = await refusedInSession(gate, t);
    // A request that reached a provider counts in its session; one refused before is counted as
    // refused, and its hold let go.
    if (t.session && !recorded) {
      const settled =
        t.attempts.length > 0 || t.session.reserved > 0
          ? settleSession(t.session, {
              costUsd: t.failedCostUsd,
              promptTokens: 0,
              completionTokens: 0,
              tools: [],
              toolCallKey: null,
              role,
              failed: true,
            })
          : noteRefusal(t.session);
      await settled.catch((e) => console.error('session: could not settle', t.session?.id, e));
    }
    const domainError =
      error instanceof DomainError
        ? error
        : new TaskFailure('upstream_error', 'The request failed inside the gateway', t.attempts);
    if (!(error instanceof DomainError)) console.error(`${kind.taskType}: unexpected failure`, error);
    // The answer names the entry this failure leaves (a step's own is the request's).
    if (!step) domainError.requestId = t.id;
    const entry = logEntryOf(deps, kind, t, {
      success: false,
      statusCode: HTTP_STATUS[domainError.code],
      error: domainError,
      costUsd: t.failedCostUsd,
    });
    const unexpected = !(error instanceof DomainError);
    requestEnded(entry, { taskType: kind.taskType, unexpected, nested: step !== undefined });
    await deps.logs.add(entry);
    throw domainError;
  }
}
