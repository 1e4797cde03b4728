/** POST /v3/chat: the native chat endpoint, JSON or Server-Sent Events. */
import { Hono } from 'hono';
import { z } from 'zod';
import type { ChatOutcome, DataPlane, StreamStart } from '../dataplane/chat.ts';
import { fromNative, nativeChatSchema } from '../dataplane/request.ts';
import { DomainError, ValidationError } from '../domain/errors.ts';
import { loadGate } from '../domain/gateCache.ts';
import { errorBody, readJson } from '../http/errors.ts';
import type { ActorEnv } from '../http/middleware.ts';
import { streamChat } from '../http/sse.ts';
import { issuesFromZod } from '../rules/issues.ts';

/** Response headers that tell what the gateway did besides answering. */
export function outcomeHeaders(
  o: Pick<ChatOutcome, 'id' | 'modelUsed' | 'ignoredOverrides'> & Partial<ChatOutcome>,
) {
  return {
    'x-gatehouse-request-id': o.id,
    'x-gatehouse-model-used': o.modelUsed,
    ...(o.costUsd !== undefined && { 'x-gatehouse-cost-usd': String(o.costUsd) }),
    ...(o.ignoredOverrides.length > 0 && { 'x-gatehouse-ignored-overrides': o.ignoredOverrides.join(',') }),
    ...(o.spendingWarning && { 'x-gatehouse-spending-warning': 'spending limit reached' }),
  };
}

/** Parses with a zod schema, or throws a ValidationError naming each bad field. */
export function parseWith<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new ValidationError(issuesFromZod(parsed.error));
  return parsed.data;
}

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

export function nativeChatRoutes(dataPlane: DataPlane) {
  return new Hono<ActorEnv>().post('/chat', async (c) => {
    const body = await readJson(c);
    const gateId = (body as { gateId?: unknown } | null)?.gateId;
    if (typeof gateId !== 'string' || !z.uuid().safeParse(gateId).success) {
      throw new ValidationError([{ path: 'gateId', message: 'is required and must be a gate UUID' }]);
    }
    const gate = await loadGate(c.var.actor.user.id, gateId);
    const caller = { userId: c.var.actor.user.id, endpoint: '/v3/chat' };
    const parse = () => fromNative(parseWith(nativeChatSchema, body));
    const wantsStream = (body as { data?: { stream?: unknown } }).data?.stream === true;
    if (!wantsStream) {
      const outcome = await dataPlane.chat(caller, gate, parse, { signal: c.req.raw.signal });
      return c.json(nativeAnswer(outcome), 200, outcomeHeaders(outcome));
    }
    return streamChat((hooks) => dataPlane.chat(caller, gate, parse, hooks), nativeSse, c.req.raw.signal);
  });
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
  headers: (s: StreamStart) =>
    outcomeHeaders({ id: s.id, modelUsed: s.model, ignoredOverrides: s.ignoredOverrides }),
};
