/**
 * The OpenAI Responses API without server-side state: POST /v1/responses, in OpenAI's wire format
 * and error shape, so the official SDK's `responses.create` works pointed at {base}/v1. The gate
 * comes in x-gatehouse-gate-id, a gateId in the body, or its UUID as the model. Whatever the gate
 * routes to answers, translated; nothing is stored, so follow-ups send the whole conversation.
 */
import { Hono } from 'hono';
import type { DataPlane } from '../../dataplane/chat.ts';
import { parseWith } from '../../domain/errors.ts';
import { loadGate } from '../../domain/gateCache.ts';
import { callerOf } from '../../http/caller.ts';
import { clientSignal, nodeResponse, readJson } from '../../http/errors.ts';
import type { ActorEnv } from '../../http/middleware.ts';
import { requireActor } from '../../http/middleware.ts';
import { outcomeHeaders, streamChat } from '../../http/sse.ts';
import { gateIdOf, openAIError } from '../openai.ts';
import { fromResponses, responsesSchema } from './request.ts';
import { type Echo, responseBody, responseStream } from './response.ts';

export function responsesRoutes(dataPlane: DataPlane, limits: { maxBodyBytes: number }) {
  const app = new Hono<ActorEnv>();
  app.onError((error, c) => {
    const { status, body } = openAIError(error);
    return c.json(body, status as 400);
  });

  app.post('/responses', requireActor, async (c) => {
    const signal = clientSignal(c);
    const body = await readJson(c, limits.maxBodyBytes);
    const gate = await loadGate(c.var.actor.user.id, gateIdOf(c, body));
    const caller = callerOf(c, '/v1/responses');
    const b = (body ?? {}) as { model?: unknown; stream?: unknown };
    // The response repeats what the request asked for, once the data plane has read it.
    let echo: Echo = {};
    const parse = () => {
      const parsed = parseWith(responsesSchema, body);
      echo = parsed;
      return fromResponses(parsed, { modelIsGate: b.model === gate.id });
    };
    if (b.stream !== true) {
      const outcome = await dataPlane.chat(caller, gate, parse, { signal });
      return c.json(responseBody(outcome, echo), 200, outcomeHeaders(outcome));
    }
    return streamChat(
      (hooks) => dataPlane.chat(caller, gate, parse, hooks),
      responseStream(() => echo),
      signal,
      nodeResponse(c),
    );
  });
  return app;
}
