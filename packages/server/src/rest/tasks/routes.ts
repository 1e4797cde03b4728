/**
 * The task types' HTTP surface, built the same way for each: `POST /v3/<type>` with the native
 * envelope `{gateId, data, model?, sessionId?, metadata?}`, and the OpenAI-compatible route in
 * OpenAI's wire format and error shape. A type adds a NativeTask and an OpenAITask (its files in
 * this directory); the pipeline does the rest.
 */
import { isUuid } from '@gatehouse/rules/ids';
import type { Context } from 'hono';
import { Hono } from 'hono';
import type { DataPlane } from '../../dataplane/chat.ts';
import type { TaskAnswerBase, TaskKind, TaskOutcome, TaskRequestBase } from '../../dataplane/pipeline.ts';
import { ValidationError } from '../../domain/errors.ts';
import { loadGate } from '../../domain/gateCache.ts';
import { callerOf } from '../../http/caller.ts';
import { clientSignal, readJson } from '../../http/errors.ts';
import type { ActorEnv } from '../../http/middleware.ts';
import { requireActor } from '../../http/middleware.ts';
import { describe, documented, ERRORS, type RouteDoc } from '../../http/openapi.ts';
import { outcomeHeaders } from '../../http/sse.ts';
import { GATE_RESOLUTION, traced } from '../../observability/tracing.ts';
import { gateOf, openAIError } from '../openai.ts';

/** Reads a request body: JSON here; a type whose clients upload files reads multipart itself. */
export type BodyReader = (c: Context, maxBytes: number) => Promise<unknown>;

const readJsonBody: BodyReader = (c, maxBytes) => readJson(c, maxBytes);

/** How /openapi.json shows the route: what it does, the body `parse` reads, what it answers. */
export type TaskDoc = Pick<RouteDoc, 'summary' | 'body'> & { ok: RouteDoc['ok'] };

// biome-ignore lint/suspicious/noExplicitAny: a list of tasks of different request and answer types
type AnyKind = TaskKind<any, any, any>;

export type NativeTask<R extends TaskRequestBase, A extends TaskAnswerBase> = {
  /** `/v3/<path>`. */
  path: string;
  kind: TaskKind<R, unknown, A> | AnyKind;
  doc: TaskDoc;
  read?: BodyReader;
  /** The body as the type's request; throws a ValidationError naming the field. */
  parse(body: unknown): R;
  /** The answer's own fields; `id`, `model`, `costUsd` and `latencyMs` are added. */
  answer(outcome: TaskOutcome<A>, body: unknown): Record<string, unknown>;
};

export type OpenAITask<R extends TaskRequestBase, A extends TaskAnswerBase> = {
  /** `/v1/<path>`. */
  path: string;
  kind: TaskKind<R, unknown, A> | AnyKind;
  /** Its body's known fields; the route takes others too (they are not read). */
  doc: TaskDoc;
  read?: BodyReader;
  /** The body as the type's request; `modelIsGate` when `model` names the gate by its UUID. */
  parse(body: unknown, modelIsGate: boolean): R;
  /** The whole answer: JSON, or a Response of its own (binary audio). */
  answer(outcome: TaskOutcome<A>, body: unknown): Record<string, unknown> | Response;
};

// biome-ignore lint/suspicious/noExplicitAny: tasks of different request and answer types in one list
export type AnyNativeTask = NativeTask<any, any>;
// biome-ignore lint/suspicious/noExplicitAny: tasks of different request and answer types in one list
export type AnyOpenAITask = OpenAITask<any, any>;

function nativeGateId(body: unknown): string {
  const gateId = (body as { gateId?: unknown } | null)?.gateId;
  if (typeof gateId !== 'string' || !isUuid(gateId)) {
    throw new ValidationError([{ path: 'gateId', message: 'is required and must be a gate UUID' }]);
  }
  return gateId;
}

export function nativeTaskRoutes(
  dataPlane: DataPlane,
  limits: { maxBodyBytes: number },
  tasks: AnyNativeTask[],
) {
  const app = new Hono<ActorEnv>();
  for (const task of tasks) {
    const doc = describe({
      ...task.doc,
      tags: ['Native data plane'],
      description: "The answer holds `id`, `model`, the type's own fields, `costUsd` and `latencyMs`.",
      errors: ERRORS.gateway,
    });
    app.post(
      `/${task.path}`,
      documented(doc, async (c) => {
        const signal = clientSignal(c);
        const body = await (task.read ?? readJsonBody)(c, limits.maxBodyBytes);
        const gate = await traced(GATE_RESOLUTION, {}, () =>
          loadGate(c.var.actor.user.id, nativeGateId(body)),
        );
        const caller = callerOf(c, `/v3/${task.path}`, body);
        const outcome = await dataPlane.run(task.kind, caller, gate, () => task.parse(body), { signal });
        return c.json(
          {
            id: outcome.id,
            model: outcome.modelUsed,
            ...task.answer(outcome, body),
            costUsd: outcome.costUsd,
            latencyMs: outcome.latencyMs,
          },
          200,
          outcomeHeaders(outcome),
        );
      }),
    );
  }
  return app;
}

export function openAITaskRoutes(
  dataPlane: DataPlane,
  limits: { maxBodyBytes: number },
  tasks: AnyOpenAITask[],
) {
  const app = new Hono<ActorEnv>();
  app.onError((error, c) => {
    const { status, body } = openAIError(error);
    return c.json(body, status as 400);
  });
  for (const task of tasks) {
    const doc = describe({
      ...task.doc,
      tags: ['OpenAI-compatible'],
      description: "OpenAI's wire format; the gate comes from x-gatehouse-gate-id, a `gateId`, or the model.",
      errors: ERRORS.gateway,
      errorShape: 'openai',
    });
    app.post(
      `/${task.path}`,
      requireActor,
      documented(doc, async (c) => {
        const signal = clientSignal(c);
        const body = await (task.read ?? readJsonBody)(c, limits.maxBodyBytes);
        const { gate, modelIsGate } = await gateOf(c, body);
        const caller = callerOf(c, `/v1/${task.path}`, body, 'user');
        const outcome = await dataPlane.run(task.kind, caller, gate, () => task.parse(body, modelIsGate), {
          signal,
        });
        const answer = task.answer(outcome, body);
        if (answer instanceof Response) {
          for (const [name, value] of Object.entries(outcomeHeaders(outcome)))
            answer.headers.set(name, value);
          return answer;
        }
        return c.json(answer, 200, outcomeHeaders(outcome));
      }),
    );
  }
  return app;
}
