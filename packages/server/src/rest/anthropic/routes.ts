/**
 * The Anthropic Messages API: POST /v1/messages and /v1/messages/count_tokens, in Anthropic's
 * wire format and error shape, so the official SDK and Claude Code work pointed at {base}. The
 * key comes in x-api-key or Authorization: Bearer; the gate in x-gatehouse-gate-id, or as the
 * model (its UUID, or `gatehouse/<name>`). An Anthropic model gets the body as sent (with the
 * gate's changes) and answers as it does; any other answers through the translation.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import type { DataPlane } from '../../dataplane/chat.ts';
import { estimatePromptTokens } from '../../dataplane/cost.ts';
import { type GateForMerge, mergeRequest } from '../../dataplane/merge.ts';
import { parseWith } from '../../domain/errors.ts';
import type { Gate } from '../../generated/prisma/client.ts';
import { callerOf, sentOf } from '../../http/caller.ts';
import { clientSignal, nodeResponse, readJson } from '../../http/errors.ts';
import type { ActorEnv } from '../../http/middleware.ts';
import { requireActor } from '../../http/middleware.ts';
import { describe, documented, ERRORS, eventStream } from '../../http/openapi.ts';
import { chatAnswer, streamChat } from '../../http/sse.ts';
import { gateOf } from '../openai.ts';
import {
  betasOf,
  countTokensSchema,
  fromAnthropic,
  messagesRequest,
  messagesSchema,
  translatable,
} from './request.ts';
import { anthropicError, messageBody, messageStream } from './response.ts';

/** The input tokens of what the gate would send for this request (an estimate; see cost.ts). */
async function countInputTokens(
  gate: Gate,
  body: unknown,
  modelIsGate: boolean,
  betas: string[],
): Promise<number> {
  const parsed = parseWith(countTokensSchema, translatable(body).body);
  const request = fromAnthropic(parsed, { modelIsGate, betas });
  const { params } = mergeRequest(
    {
      ...gate,
      allowOverrides: gate.allowOverrides as GateForMerge['allowOverrides'],
      responseFormatSchema: gate.responseFormatSchema as Record<string, unknown> | null,
    },
    request,
  );
  return estimatePromptTokens(params);
}

export function anthropicRoutes(dataPlane: DataPlane, limits: { maxBodyBytes: number }) {
  const app = new Hono<ActorEnv>();
  app.onError((error, c) => {
    const { status, body } = anthropicError(error);
    return c.json(body, status as 400);
  });

  const tags = ['Anthropic-compatible'];
  const messagesDoc = describe({
    summary: "Messages, in Anthropic's wire format",
    description:
      "The key in x-api-key or Authorization: Bearer; the gate in x-gatehouse-gate-id, or as the model (its UUID, or `gatehouse/<name>`). An Anthropic model gets the body as sent, with the gate's changes; any other answers through the translation.",
    tags,
    body: messagesSchema.loose(),
    ok: {
      description: 'A message, as Anthropic answers',
      media: eventStream("With `stream: true`: Anthropic's named events (message_start … message_stop)"),
    },
    errors: ERRORS.anthropic,
    errorShape: 'anthropic',
  });
  app.post(
    '/messages',
    requireActor,
    documented(messagesDoc, async (c) => {
      const signal = clientSignal(c);
      const body = await readJson(c, limits.maxBodyBytes);
      const { gate, modelIsGate } = await gateOf(c, body);
      const caller = callerOf(c, '/v1/messages', body, 'metadata.user_id');
      const b = (body ?? {}) as { stream?: unknown };
      const betas = betasOf(c.req.header('anthropic-beta'));
      const parse = () => messagesRequest(body, { modelIsGate, betas, sent: sentOf(c) });
      if (b.stream !== true) {
        const outcome = await dataPlane.chat(caller, gate, parse, { signal });
        return chatAnswer(c, outcome, () => messageBody(outcome));
      }
      return streamChat(
        (hooks) => dataPlane.chat(caller, gate, parse, hooks),
        messageStream(),
        signal,
        nodeResponse(c),
      );
    }),
  );

  const countDoc = describe({
    summary: "Count a message's input tokens (an estimate: x-gatehouse-tokens-estimated)",
    tags,
    body: countTokensSchema.loose(),
    ok: {
      description: '`input_tokens` of what the gate would send',
      schema: z.object({ input_tokens: z.number().int() }),
    },
    errors: [400, 401, 404, 413],
    errorShape: 'anthropic',
  });
  app.post('/messages/count_tokens', countDoc, requireActor, async (c) => {
    const body = await readJson(c, limits.maxBodyBytes);
    const { gate, modelIsGate } = await gateOf(c, body);
    const inputTokens = await countInputTokens(
      gate,
      body,
      modelIsGate,
      betasOf(c.req.header('anthropic-beta')),
    );
    return c.json({ input_tokens: inputTokens }, 200, { 'x-gatehouse-tokens-estimated': 'true' });
  });
  return app;
}
