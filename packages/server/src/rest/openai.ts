/**
 * The OpenAI-compatible API: POST /v1/chat/completions and GET /v1/models, in OpenAI's wire
 * format and error shape, so the official SDKs work pointed at {base}/v1. The gate comes from
 * the x-gatehouse-gate-id header, a gateId in the body, or the model (the gate's UUID, or
 * `gatehouse/<name>`). An OpenAI model gets the body as sent, with the gate's changes.
 */

import { TASK_TYPES } from '@gatehouse/rules/gate';
import { isUuid } from '@gatehouse/rules/ids';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { z } from 'zod';
import type { ChatOutcome, DataPlane, StreamStart } from '../dataplane/chat.ts';
import { customInputOf, customInputStream, customToolNames } from '../dataplane/customTools.ts';
import { chatRequest, openAIChatSchema } from '../dataplane/request.ts';
import { prisma } from '../db/client.ts';
import { findModel, listModels, type ModelNames } from '../domain/catalog.ts';
import { DomainError, HTTP_STATUS, parseWith, ValidationError } from '../domain/errors.ts';
import { loadGate, loadGateByName } from '../domain/gateCache.ts';
import type { Gate } from '../generated/prisma/client.ts';
import { callerOf, sentOf } from '../http/caller.ts';
import {
  CLIENT_GONE_STATUS,
  clientSignal,
  isClientGone,
  nodeResponse,
  OPENAI_ERROR_TYPE,
  readJson,
} from '../http/errors.ts';
import type { ActorEnv } from '../http/middleware.ts';
import { requireActor } from '../http/middleware.ts';
import { describe, documented, ERRORS, eventStream } from '../http/openapi.ts';
import { chatAnswer, streamChat } from '../http/sse.ts';
import { GATE_RESOLUTION, traced } from '../observability/tracing.ts';
import type { StreamDelta } from '../providers/types.ts';

export const GATE_HEADER = 'x-gatehouse-gate-id';

export function openAIError(error: unknown): { status: number; body: unknown } {
  if (error instanceof DomainError) {
    const status = HTTP_STATUS[error.code];
    const issues = error instanceof ValidationError ? error.issues : [];
    return {
      status,
      body: {
        error: {
          message: error.message,
          type: OPENAI_ERROR_TYPE[status] ?? 'api_error',
          param: issues[0]?.path || null,
          code: error.code,
          // The log entry the failure left, beside x-gatehouse-request-id (the SDKs keep extra fields).
          ...(error.requestId && { request_id: error.requestId }),
        },
      },
    };
  }
  if (isClientGone(error)) return { status: CLIENT_GONE_STATUS, body: null };
  console.error('openai route: unexpected error', error);
  return {
    status: 500,
    body: {
      error: { message: 'Something went wrong on our side', type: 'api_error', param: null, code: null },
    },
  };
}

const created = () => Math.floor(Date.now() / 1000);

/**
 * A tool call as the client's wire shows it: a call of the function a custom tool became (on a
 * provider of another family) is the custom tool's call, its text unwrapped from the arguments.
 */
function toolCallOf(call: ChatOutcome['completion']['toolCalls'][number], custom: ReadonlySet<string>) {
  const { name, arguments: args } = call.function;
  return custom.has(name)
    ? { id: call.id, type: 'custom', custom: { name, input: customInputOf(args) } }
    : call;
}

function completionBody(o: ChatOutcome, custom: ReadonlySet<string>) {
  const { completion } = o;
  return {
    id: `chatcmpl-${o.id}`,
    object: 'chat.completion',
    created: created(),
    model: o.modelUsed,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: completion.content,
          refusal: null,
          ...(completion.toolCalls.length > 0 && {
            tool_calls: completion.toolCalls.map((call) => toolCallOf(call, custom)),
          }),
        },
        logprobs: null,
        finish_reason: completion.finishReason,
      },
    ],
    usage: usageBody(o),
  };
}

function usageBody(o: ChatOutcome) {
  return {
    prompt_tokens: o.usage.promptTokens,
    completion_tokens: o.usage.completionTokens,
    total_tokens: o.usage.promptTokens + o.usage.completionTokens,
    ...(o.usage.cachedTokens && { prompt_tokens_details: { cached_tokens: o.usage.cachedTokens } }),
    ...(o.usage.reasoningTokens && {
      completion_tokens_details: { reasoning_tokens: o.usage.reasoningTokens },
    }),
  };
}

function chunk(s: StreamStart, delta: Record<string, unknown>, finishReason: string | null = null) {
  return {
    id: `chatcmpl-${s.id}`,
    object: 'chat.completion.chunk',
    created: created(),
    model: s.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

/**
 * The stream's chunks. A custom tool's call (see toolCallOf) streams as `{type: "custom",
 * custom: {name, input}}` fragments, its text decoded from the arguments as they arrive and the
 * rest of it in a last fragment before the finish.
 */
function sseFormat(includeUsage: boolean, custom: ReadonlySet<string>) {
  let first = true;
  const customCalls = new Map<number, ReturnType<typeof customInputStream>>();
  return {
    delta: (s: StreamStart, d: StreamDelta) => {
      const delta: Record<string, unknown> = first ? { role: 'assistant' } : {};
      first = false;
      if (d.content !== undefined) delta.content = d.content;
      if (d.toolCalls) {
        delta.tool_calls = d.toolCalls.map((t) => {
          if (t.name && custom.has(t.name) && !customCalls.has(t.index)) {
            customCalls.set(t.index, customInputStream());
          }
          const text = customCalls.get(t.index);
          if (text) {
            return {
              index: t.index,
              ...(t.id && { id: t.id, type: 'custom' }),
              custom: { ...(t.name && { name: t.name }), input: text.push(t.arguments ?? '') },
            };
          }
          return {
            index: t.index,
            ...(t.id && { id: t.id, type: 'function' }),
            function: { ...(t.name && { name: t.name }), arguments: t.arguments ?? '' },
          };
        });
      }
      return [chunk(s, delta)];
    },
    end: (s: StreamStart, o: ChatOutcome) => [
      ...[...customCalls].flatMap(([index, text]) => {
        const { rest } = text.end();
        return rest ? [chunk(s, { tool_calls: [{ index, custom: { input: rest } }] })] : [];
      }),
      chunk({ ...s, model: o.modelUsed }, {}, o.completion.finishReason),
      ...(includeUsage
        ? [{ ...chunk({ ...s, model: o.modelUsed }, {}), choices: [], usage: usageBody(o) }]
        : []),
    ],
    error: (error: unknown) => openAIError(error).body,
  };
}

/** A model field naming a gate: `gatehouse/<gate name or UUID>`, for agents configured by model alone. */
export const GATE_MODEL_PREFIX = 'gatehouse/';

/**
 * The gate a request names, in the x-gatehouse-gate-id header, a gateId in the body, its UUID as
 * the model, or `gatehouse/<name or UUID>` as the model (names are unique per account, looked up
 * in the caller's); `modelIsGate` when the model field named the gate (it then asks for no model).
 */
export async function gateOf(
  c: Context<ActorEnv>,
  body: unknown,
): Promise<{ gate: Gate; modelIsGate: boolean }> {
  const b = (body ?? {}) as { gateId?: unknown; model?: unknown };
  const model = typeof b.model === 'string' ? b.model : undefined;
  const named = model?.startsWith(GATE_MODEL_PREFIX) ? model.slice(GATE_MODEL_PREFIX.length) : undefined;
  const userId = c.var.actor.user.id;
  const candidate =
    c.req.header(GATE_HEADER) ??
    (typeof b.gateId === 'string' ? b.gateId : undefined) ??
    (model !== undefined && isUuid(model) ? model : undefined);
  if (candidate === undefined && named) {
    const gate = await traced(GATE_RESOLUTION, {}, () =>
      isUuid(named) ? loadGate(userId, named) : loadGateByName(userId, named),
    );
    return { gate, modelIsGate: true };
  }
  if (candidate === undefined) {
    throw new ValidationError([
      {
        path: 'gateId',
        message: `no gate named: send the ${GATE_HEADER} header, a gateId, the gate UUID as the model, or "${GATE_MODEL_PREFIX}<gate name>" as the model`,
      },
    ]);
  }
  if (!isUuid(candidate)) {
    throw new ValidationError([{ path: 'gateId', message: `"${candidate}" is not a gate UUID` }]);
  }
  const gate = await traced(GATE_RESOLUTION, {}, () => loadGate(userId, candidate));
  // A gate named in the model field is never a model asked for, whichever gate the header names.
  return { gate, modelIsGate: model === gate.id || named !== undefined };
}

const modelsQuerySchema = z.strictObject({ taskType: z.enum(TASK_TYPES).optional() });

export function openAIRoutes(dataPlane: DataPlane, limits: { maxBodyBytes: number }, models: ModelNames) {
  const app = new Hono<ActorEnv>();
  app.onError((error, c) => {
    const { status, body } = openAIError(error);
    return c.json(body, status as 400);
  });
  const tags = ['OpenAI-compatible'];
  const chatDoc = describe({
    summary: "Chat completions, in OpenAI's wire format",
    description:
      "The gate comes from x-gatehouse-gate-id, a `gateId`, or the model (its UUID, or `gatehouse/<name>`). An OpenAI model gets the body as sent, with the gate's changes; other providers get it translated, and fields they cannot take are dropped (named in x-gatehouse-dropped-fields) or refused.",
    tags,
    body: openAIChatSchema.loose(),
    ok: {
      description: 'A chat.completion, as OpenAI answers',
      media: eventStream('With `stream: true`: chat.completion.chunk events, then `[DONE]`'),
    },
    errors: ERRORS.gateway,
    errorShape: 'openai',
  });
  app.post(
    '/chat/completions',
    requireActor,
    documented(chatDoc, async (c) => {
      const signal = clientSignal(c);
      const body = await readJson(c, limits.maxBodyBytes);
      const { gate, modelIsGate } = await gateOf(c, body);
      const caller = callerOf(c, '/v1/chat/completions', body, 'user');
      const b = (body ?? {}) as {
        stream?: unknown;
        stream_options?: { include_usage?: unknown };
        tools?: unknown;
      };
      const custom = customToolNames(b.tools);
      const parse = () => chatRequest(body, { modelIsGate, sent: sentOf(c) });
      if (b.stream !== true) {
        const outcome = await dataPlane.chat(caller, gate, parse, { signal });
        return chatAnswer(c, outcome, () => completionBody(outcome, custom));
      }
      const format = sseFormat(b.stream_options?.include_usage === true, custom);
      return streamChat(
        (hooks) => dataPlane.chat(caller, gate, parse, hooks),
        format,
        signal,
        nodeResponse(c),
      );
    }),
  );

  /**
   * The caller's gates (usable as the model) and the models they route to, each under its
   * `provider/model` id and, where it resolves back to the same model, its plain name.
   */
  const modelsDoc = describe({
    summary: 'Your gates (usable as the model) and the models they route to',
    tags,
    query: modelsQuerySchema,
    ok: { description: 'A list of models, as OpenAI answers, with `task_types`' },
    errors: [400, 401],
    errorShape: 'openai',
  });
  app.get('/models', modelsDoc, requireActor, async (c) => {
    const { taskType } = parseWith(modelsQuerySchema, c.req.query());
    const gates = await prisma.gate.findMany({
      where: { userId: c.var.actor.user.id, ...(taskType && { taskType }) },
      select: { id: true, name: true, model: true, fallbackModels: true, createdAt: true, taskType: true },
      orderBy: { createdAt: 'asc' },
    });
    const routed = new Set(gates.flatMap((g) => [g.model, ...g.fallbackModels]));
    // For one task type, also every catalog model that serves it on a provider configured here.
    if (taskType) {
      for (const m of listModels({ taskType })) if (models.configured.has(m.provider)) routed.add(m.id);
    }
    const spellings = [...routed].flatMap((id) => {
      const model = findModel(id);
      const owner = model?.provider ?? 'unknown';
      const plain = models.plainNameOf(id);
      const ids = plain === null ? [id] : [id, plain];
      return ids.map((spelling) => ({ id: spelling, owner, taskTypes: model?.taskTypes ?? [] }));
    });
    const seconds = (d: Date) => Math.floor(d.getTime() / 1000);
    return c.json({
      object: 'list',
      data: [
        ...gates.map((g) => ({
          id: g.id,
          object: 'model',
          created: seconds(g.createdAt),
          owned_by: 'gatehouse',
          name: g.name,
          task_types: [g.taskType],
        })),
        ...spellings
          .sort((a, b) => a.id.localeCompare(b.id))
          .map(({ id, owner, taskTypes }) => ({
            id,
            object: 'model',
            created: 0,
            owned_by: owner,
            task_types: taskTypes,
          })),
      ],
    });
  });
  return app;
}
