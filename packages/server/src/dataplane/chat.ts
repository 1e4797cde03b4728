/**
 * Chat through a gate: the chat task kind of the shared pipeline (pipeline.ts), with what only
 * chat has: the gate merge of messages and parameters, structured output checked before any of
 * the answer reaches the client, and streaming. Knows nothing of HTTP: the endpoints parse the
 * wire format and write the answer.
 */
import type { AllowOverrides } from '@gatehouse/rules/gate';
import { findModel } from '../domain/catalog.ts';
import { ValidationError } from '../domain/errors.ts';
import { modelFact } from '../domain/modelFacts.ts';
import type { Gate } from '../generated/prisma/client.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import {
  type ChatCompletion,
  type ChatParams,
  type Forward,
  ProviderError,
  type StreamDelta,
  textOf,
} from '../providers/types.ts';
import type { RolePicker } from './agent.ts';
import type { TaskCaller } from './caller.ts';
import { boundedForReservation, costOf, estimatePromptTokens, estimateUsage, worstCaseCost } from './cost.ts';
import { mergeRequest } from './merge.ts';
import {
  type Leaving,
  type PipelineDeps,
  type RouteControl,
  runTask,
  type TaskAnswerBase,
  TaskFailure,
  type TaskKind,
  type TaskOutcome,
  type TaskRequestBase,
} from './pipeline.ts';
import { EFFORT_FIELD, reasoningFor } from './reasoning.ts';
import { type ChatRequest, droppedTold } from './request.ts';
import { formatViolation, schemaProblem, withInjectedFormat } from './structured.ts';

export type { Attempt } from './pipeline.ts';
/** The chat routes' name for the pipeline's attempt-level failure. */
export { TaskFailure as ChatFailure };

export type ChatOutcome = Omit<TaskOutcome<ChatCompletion>, 'answer'> & { completion: ChatCompletion };

export type ChatCaller = TaskCaller;

export type StreamStart = {
  id: string;
  model: string;
  ignoredOverrides: string[];
  /** An orchestrated agent gate's step (the sub-gate role answering). */
  action?: string | null;
  /** What the translation for this model left out of a drop-in request (Forward.dropped). */
  dropped?: string[];
};

export type ChatHooks = {
  /** Streams the answer; called before the outcome is known, once the first byte is decided. */
  onDelta?: (delta: StreamDelta) => void;
  /** Called once the answering model's stream begins (headers can still be set before it). */
  onStreamStart?: (info: StreamStart) => void;
  signal?: Leaving;
};

export type DataPlaneDeps = PipelineDeps;

/**
 * The chat kind for one request: its hooks stream the answer, and `emit` remembers whether any
 * of it has gone to the client (then no other model may take over).
 */
function chatKind(
  providers: ProviderRegistry,
  hooks: ChatHooks,
  emit: { started: boolean },
): TaskKind<ChatRequest, ChatParams, ChatCompletion> {
  /** Whether the provider of `modelId` takes a drop-in request of `api` as its client sent it. */
  const forwards = (modelId: string, api: Forward['api']) => {
    const provider = findModel(modelId)?.provider;
    return provider !== undefined && providers.adapter(provider)?.forwards?.has(api) === true;
  };
  let ignoredOverrides: string[] = [];
  /** The gate refuses hosted tools a model of another family cannot run, rather than drop them. */
  let strictHostedTools = false;
  /** Tools an agent gate kept from the model: calling one is a failed attempt. */
  let hidden = new Set<string>();
  return {
    taskType: 'chat',
    noun: 'chat',
    restrictTools(request, visible) {
      if (!request.tools?.length) return { request, hidden: [] };
      const shown = new Set(visible);
      const tools = request.tools.filter((t) => shown.has(t.function.name));
      const hiddenNames = request.tools
        .filter((t) => !shown.has(t.function.name))
        .map((t) => t.function.name);
      hidden = new Set(hiddenNames);
      if (hiddenNames.length === 0) return { request, hidden: [] };
      const { tools: _all, toolChoice, forward, ...rest } = request;
      const forced = typeof toolChoice === 'object' ? toolChoice.function.name : null;
      return {
        request: {
          ...rest,
          ...(forward && { forward: withoutTools(forward, hidden) }),
          ...(tools.length > 0 && { tools }),
          ...(toolChoice !== undefined &&
            tools.length > 0 &&
            (forced === null || shown.has(forced)) && { toolChoice }),
        },
        hidden: hiddenNames,
      };
    },
    toolCallsOf: (completion) => completion.toolCalls.map((c) => c.function),
    topicOf(request) {
      const first = request.messages.find((m) => m.role === 'user');
      return first ? textOf(first.content as string) : null;
    },
    conversationOf: (request) => request.messages,
    merge(gate: Gate, request: ChatRequest) {
      const merged = mergeRequest(
        {
          ...gate,
          allowOverrides: gate.allowOverrides as AllowOverrides,
          responseFormatSchema: gate.responseFormatSchema as Record<string, unknown> | null,
        },
        request,
      );
      const badSchema = schemaProblem(merged.params.responseFormat);
      if (badSchema) throw new ValidationError([{ path: 'responseFormat', message: badSchema }]);
      // A body only its own family reads is refused at the door of a gate with no such model.
      const forward = request.forward;
      if (
        forward?.untranslatable &&
        ![merged.model, ...gate.fallbackModels].some((m) => forwards(m, forward.api))
      ) {
        throw forward.untranslatable;
      }
      ignoredOverrides = merged.ignoredOverrides;
      strictHostedTools = gate.strictHostedTools;
      return merged;
    },
    // The reservation assumes an output cap and a cost of tokens: what is sent is held to both.
    bounded: boundedForReservation,
    worstCase: worstCaseCost,
    promptTokens: estimatePromptTokens,
    async attempt({ id, modelId, model, params, timing, deps, action }) {
      const adapter = deps.providers.adapter(model.provider);
      if (!adapter)
        throw new ProviderError('not_configured', `Provider "${model.provider}" is not configured`);
      const format = params.responseFormat;
      const native =
        !format || format.type === 'text' || deps.providers.nativeResponseFormat(model.provider, format.type);
      const injected = withInjectedFormat(params, native);
      // Same family, same wire: the client's body goes on as sent, with the gate's changes.
      const forward = injected.forward;
      const forwarding =
        forward !== undefined && adapter.forward !== undefined && adapter.forwards?.has(forward.api);
      if (forward?.untranslatable && !forwarding) {
        const error = new ProviderError(
          'http',
          `${forward.untranslatable.message} (${modelId} takes no request in this shape)`,
          400,
        );
        error.unreached = true;
        throw error;
      }
      // Across families, the reasoning setting takes the answering model's form, or is named.
      const translated =
        forward && !forwarding
          ? reasoningFor(
              { provider: model.provider, reasons: modelFact(modelId)?.capabilities.reasoning === true },
              injected,
              EFFORT_FIELD[forward.api],
            )
          : { params: injected, dropped: [] };
      const sent = translated.params;
      const hosted = forward && !forwarding ? hostedToolsOf(forward.dropped) : [];
      if (strictHostedTools && hosted.length > 0) {
        const error = new ProviderError('http', hostedToolsRefusal(hosted, modelId), 400);
        error.unreached = true;
        throw error;
      }
      // Told from here on (headers, log entry), so bounded; the hosted tools above were read in full.
      const dropped = !forward
        ? []
        : droppedTold(forwarding ? (forward.withheld ?? []) : [...forward.dropped, ...translated.dropped]);
      const info: StreamStart = { id, model: modelId, ignoredOverrides, action, dropped };
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
      const options = { signal: timing.signal, ...(onDelta && { onDelta }) };
      const completion =
        forwarding && forward && adapter.forward
          ? await adapter.forward(model.providerModel, { ...sent, forward }, options)
          : await adapter.chat(model.providerModel, withoutForward(sent), options);
      if (dropped.length > 0) completion.dropped = dropped;
      const forbidden = completion.toolCalls.find((c) => hidden.has(c.function.name));
      if (forbidden) {
        const error = new ProviderError(
          'invalid_response',
          `The model called "${forbidden.function.name}", a tool this gate keeps from it`,
          null,
          completion.providerResponse,
        );
        error.providerRequest = completion.providerRequest;
        error.usage = completion.usage ?? (await estimateUsage(sent, completion));
        throw error;
      }
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
    },
    async price(_model, modelId, params, completion) {
      const reported = completion.usage;
      const usage = reported ?? (await estimateUsage(params, completion));
      return { usage, tokensEstimated: reported === null, costUsd: costOf(modelId, usage) };
    },
    logFields(request, completion) {
      const toolResults = request.messages
        .filter((m) => m.role === 'tool')
        .map((m) => ({ tool_call_id: (m as { tool_call_id: string }).tool_call_id, content: m.content }));
      return {
        toolCalls: completion?.toolCalls.length ? (completion.toolCalls as never) : undefined,
        toolResults: toolResults.length ? (toolResults as never) : undefined,
        stream: request.stream ?? false,
        // What the translation left out is kept beside the ignored overrides, marked as such.
        ...(completion?.dropped?.length && {
          ignoredOverrides: [...ignoredOverrides, ...completion.dropped.map((d) => `dropped:${d}`)],
        }),
      };
    },
  };
}

/** The hosted tools (web search, code interpreter…) a translation left out: `tools.<type>` drops. */
function hostedToolsOf(dropped: string[]): string[] {
  return dropped.filter((d) => d.startsWith('tools.')).map((d) => d.slice('tools.'.length));
}

function hostedToolsRefusal(tools: string[], modelId: string): string {
  const named = tools.map((t) => `"${t}"`).join(', ');
  const what = tools.length === 1 ? `tool ${named} runs` : `tools ${named} run`;
  return `tools: the hosted ${what} only at the client's own provider, and ${modelId} cannot run ${tools.length === 1 ? 'it' : 'them'} (this gate refuses such tools rather than leave them out: strictHostedTools)`;
}

/** What a translating adapter is sent: the client's own body is not for it (nor for its log). */
function withoutForward(params: ChatParams): ChatParams {
  if (!params.forward) return params;
  const { forward: _forward, ...translated } = params;
  return translated;
}

/** Where each drop-in wire format keeps a tool's name. */
function toolName(api: Forward['api'], tool: unknown): unknown {
  const t = (tool ?? {}) as { name?: unknown; function?: { name?: unknown }; custom?: { name?: unknown } };
  return api === 'openai-chat' ? (t.function?.name ?? t.custom?.name) : t.name;
}

/** A forwarded body without the tools an agent gate keeps from the model. */
function withoutTools(forward: Forward, hidden: ReadonlySet<string>): Forward {
  const tools = forward.body.tools;
  if (!Array.isArray(tools)) return forward;
  const kept = tools.filter((t) => !hidden.has(toolName(forward.api, t) as string));
  return { ...forward, body: { ...forward.body, tools: kept } };
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
): Promise<ChatOutcome> {
  const emit = { started: false };
  const control: RouteControl = { signal: hooks.signal, committed: () => emit.started };
  const { answer, ...outcome } = await runTask(
    deps,
    chatKind(deps.providers, hooks, emit),
    caller,
    gate,
    parse,
    control,
  );
  return { ...outcome, completion: answer };
}

const ROUTER_PROMPT = `You route one step of an agent's conversation to the sub-gate whose role fits it.
Answer with JSON {"role": "<role>"} naming exactly one of these roles:`;

/** The text of a conversation for the router: what was said, without images or tool payloads. */
function transcriptOf(messages: ChatRequest['messages']): ChatRequest['messages'] {
  return messages
    .filter((m) => m.role === 'user' || m.role === 'assistant')
    .map((m) => ({ role: m.role, content: textOf(m.content as string) }) as ChatRequest['messages'][number])
    .filter((m) => m.content);
}

/**
 * Dynamic orchestration: the agent gate's own model picks the role, in a structured-output
 * request of its own through the gate (logged as the session's `route` step, counted to it).
 */
function rolePicker(deps: () => DataPlaneDeps): RolePicker {
  return async (gate, caller, session, conversation, roles) => {
    const schema = {
      type: 'object',
      properties: { role: { type: 'string', enum: roles.map((r) => r.role) } },
      required: ['role'],
      additionalProperties: false,
    };
    const listed = roles.map((r) => `- ${r.role}${r.description ? `: ${r.description}` : ''}`).join('\n');
    const request: ChatRequest = {
      messages: [
        { role: 'system', content: `${ROUTER_PROMPT}\n${listed}` },
        ...transcriptOf(conversation as ChatRequest['messages']),
      ],
      stream: false,
      responseFormat: { type: 'json_schema', json_schema: { name: 'route', schema, strict: true } },
    };
    // The router's request is the gateway's own: the client's body is not what it sent.
    const { body: _body, ...router } = caller;
    const outcome = await runTask(
      deps(),
      chatKind(deps().providers, {}, { started: false }),
      router,
      gate,
      () => request,
      {},
      { session, action: 'route' },
    );
    return (JSON.parse(outcome.answer.content ?? '{}') as { role: string }).role;
  };
}

/** The data plane over its long-lived parts (providers, log writer, ledger). */
export function createDataPlane(base: DataPlaneDeps) {
  const deps: DataPlaneDeps = { ...base, pickRole: rolePicker(() => deps) };
  return {
    chat: (caller: ChatCaller, gate: Gate, parse: () => ChatRequest, hooks?: ChatHooks) =>
      chat(deps, caller, gate, parse, hooks),
    /** Any task kind through a gate (tasks/*.ts). */
    run: <R extends TaskRequestBase, P, A extends TaskAnswerBase>(
      kind: TaskKind<R, P, A>,
      caller: TaskCaller,
      gate: Gate,
      parse: () => R,
      control?: RouteControl,
    ) => runTask(deps, kind, caller, gate, parse, control),
  };
}

export type DataPlane = ReturnType<typeof createDataPlane>;
