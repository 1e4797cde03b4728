/** POST /v3/chat: the native chat endpoint, JSON or Server-Sent Events. */

import { isUuid } from '@gatehouse/rules/ids';
import { Hono } from 'hono';
import type { ChatOutcome, DataPlane, StreamStart } from '../dataplane/chat.ts';
import { fromNative, nativeChatSchema } from '../dataplane/request.ts';
import { DomainError, parseWith, ValidationError } from '../domain/errors.ts';
import { loadGate } from '../domain/gateCache.ts';
import { callerOf } from '../http/caller.ts';
import { clientSignal, errorBody, nodeResponse, readJson } from '../http/errors.ts';
import type { ActorEnv } from '../http/middleware.ts';
import { describe, documented, ERRORS, eventStream } from '../http/openapi.ts';
import { jsonAnswer, outcomeHeaders, streamChat } from '../http/sse.ts';
import { GATE_RESOLUTION, traced } from '../observability/tracing.ts';

function nativeAnswer(o: ChatOutcome) {
  return {
    id: o.id,
    content: o.completion.content,
    model: o.modelUsed,
    finishReason: o.completion.finishReason,
    ...(o.completion.toolCalls.length > 0 && { toolCalls: o.completion.toolCalls }),
    usage: {
      promptTokens: o.usage.promptTokens,
      completionTokens: o.usage.completionTokens,
      totalTokens: o.usage.promptTokens + o.usage.completionTokens,
      ...(o.tokensEstimated && { estimated: true }),
    },
    costUsd: o.costUsd,
    latencyMs: o.latencyMs,
  };
}

export function nativeChatRoutes(dataPlane: DataPlane, limits: { maxBodyBytes: number }) {
  const doc = describe({
    summary: 'Chat through a gate',
    description:
      "The gate's settings apply (system prompt, parameters, routing, limits); a client's model and parameters only where the gate allows overrides.",
    tags: ['Native data plane'],
    body: nativeChatSchema,
    ok: {
      description:
        'The answer: `id`, `content`, `model`, `finishReason`, `toolCalls`, `usage`, `costUsd`, `latencyMs`',
      media: eventStream(
        'With `data.stream: true`: each delta, then the totals with `done: true`, then `[DONE]`',
      ),
    },
    errors: ERRORS.gateway,
  });
  return new Hono<ActorEnv>().post(
    '/chat',
    documented(doc, async (c) => {
      const signal = clientSignal(c);
      const body = await readJson(c, limits.maxBodyBytes);
      const gateId = (body as { gateId?: unknown } | null)?.gateId;
      if (typeof gateId !== 'string' || !isUuid(gateId)) {
        throw new ValidationError([{ path: 'gateId', message: 'is required and must be a gate UUID' }]);
      }
      const gate = await traced(GATE_RESOLUTION, {}, () => loadGate(c.var.actor.user.id, gateId));
      const caller = callerOf(c, '/v3/chat', body);
      const parse = () => fromNative(parseWith(nativeChatSchema, body));
      const wantsStream = (body as { data?: { stream?: unknown } }).data?.stream === true;
      if (!wantsStream) {
        const outcome = await dataPlane.chat(caller, gate, parse, { signal });
        return jsonAnswer(c, JSON.stringify(nativeAnswer(outcome)), outcomeHeaders(outcome));
      }
      return streamChat(
        (hooks) => dataPlane.chat(caller, gate, parse, hooks),
        nativeSse,
        signal,
        nodeResponse(c),
      );
    }),
  );
}

const nativeSse = {
  delta: (s: StreamStart, d: { content?: string; toolCalls?: unknown[] }) => [{ id: s.id, delta: d }],
  end: (_s: StreamStart, o: ChatOutcome) => {
    const { content: _content, ...rest } = nativeAnswer(o);
    return [{ ...rest, done: true, ...(o.spendingWarning && { spendingWarning: true }) }];
  },
  error: (error: unknown) =>
    error instanceof DomainError
      ? errorBody(error.code, error.message)
      : errorBody('upstream_error', 'The stream failed'),
};
