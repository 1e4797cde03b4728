/**
 * The OpenAI Responses API without server-side state: POST /v1/responses, in OpenAI's wire format
 * and error shape, so the official SDK's `responses.create` and Codex CLI work pointed at
 * {base}/v1. The gate comes in x-gatehouse-gate-id, a gateId in the body, or the model (its UUID,
 * or `gatehouse/<name>`). An OpenAI model gets the body as sent, with the gate's changes, and
 * answers as it does; any other answers translated, storing nothing (follow-ups send the whole
 * conversation).
 */
import { Hono } from 'hono';
import type { DataPlane } from '../../dataplane/chat.ts';
import { customToolNames } from '../../dataplane/customTools.ts';
import { callerOf, sentOf } from '../../http/caller.ts';
import { clientSignal, nodeResponse, readJson } from '../../http/errors.ts';
import type { ActorEnv } from '../../http/middleware.ts';
import { requireActor } from '../../http/middleware.ts';
import { describe, documented, ERRORS, eventStream } from '../../http/openapi.ts';
import { chatAnswer, streamChat } from '../../http/sse.ts';
import { gateOf, openAIError } from '../openai.ts';
import { responsesRequest, responsesSchema } from './request.ts';
import { type Echo, responseBody, responseStream } from './response.ts';

export function responsesRoutes(dataPlane: DataPlane, limits: { maxBodyBytes: number }) {
  const app = new Hono<ActorEnv>();
  app.onError((error, c) => {
    const { status, body } = openAIError(error);
    return c.json(body, status as 400);
  });

  const doc = describe({
    summary: "Responses, in OpenAI's wire format, without stored state",
    description:
      "Nothing is stored: a follow-up sends the whole conversation. The gate comes from x-gatehouse-gate-id, a `gateId`, or the model. An OpenAI model gets the body as sent, with the gate's changes; any other answers translated.",
    tags: ['OpenAI-compatible'],
    body: responsesSchema.loose(),
    ok: {
      description: 'A response object, as OpenAI answers',
      media: eventStream(
        "With `stream: true`: the Responses API's events (response.created … response.completed)",
      ),
    },
    errors: ERRORS.gateway,
    errorShape: 'openai',
  });
  app.post(
    '/responses',
    requireActor,
    documented(doc, async (c) => {
      const signal = clientSignal(c);
      const body = await readJson(c, limits.maxBodyBytes);
      const { gate, modelIsGate } = await gateOf(c, body);
      const caller = callerOf(c, '/v1/responses', body, 'user');
      const b = (body ?? {}) as { stream?: unknown; tools?: unknown };
      // A translated response repeats what the request asked for, once the data plane has read it,
      // and answers a call of a custom tool as such.
      let echo: Echo = {};
      const parse = () =>
        responsesRequest(body, { modelIsGate, sent: sentOf(c) }, (parsed) => {
          echo = { ...parsed, customTools: customToolNames(b.tools) };
        });
      if (b.stream !== true) {
        const outcome = await dataPlane.chat(caller, gate, parse, { signal });
        return chatAnswer(c, outcome, () => responseBody(outcome, echo));
      }
      return streamChat(
        (hooks) => dataPlane.chat(caller, gate, parse, hooks),
        responseStream(() => echo),
        signal,
        nodeResponse(c),
      );
    }),
  );
  return app;
}
