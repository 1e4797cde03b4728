/**
 * What the task-type tests (/v3/embeddings, image, tts, stt, moderation, ocr, video) share: a local
 * provider stand-in checking keys as the real ones do, a route and the gates of its type, a
 * fallback read back from the log, a block limit that holds under 50 concurrent requests, and
 * refusals of bad input.
 */
import type { TaskType } from '@gatehouse/rules/gate';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';
import { attemptsOf, logEntriesOf, logEntryOf, type NativeError, readGate } from './chat.ts';
import {
  expectRepliesUsed,
  type RecordedRequest,
  startUpstream,
  type Upstream,
} from './emulators/upstream.ts';
import { createGate, type TestUser } from './factories.ts';

export const hasBearer = (request: RecordedRequest, key: string) =>
  request.headers.authorization === `Bearer ${key}`;

export const hasGoogleKey = (request: RecordedRequest, key: string) =>
  request.headers['x-goog-api-key'] === key;

/**
 * A local server standing in for the providers: 404 for a POST route it does not serve (when
 * `serves` is given), 401 for a wrong key, otherwise the scripted replies. Each test must use
 * every reply it scripts; the server closes after the file.
 */
export async function useUpstream(provider: {
  serves?: (path: string) => boolean;
  keyOk: (request: RecordedRequest) => boolean;
}): Promise<Upstream> {
  const { serves, keyOk } = provider;
  const upstream = await startUpstream((request) => {
    if (serves && (request.method !== 'POST' || !serves(request.path))) {
      return { type: 'json', status: 404, body: { error: { message: `no route ${request.path}` } } };
    }
    if (!keyOk(request)) return { type: 'json', status: 401, body: { error: { message: 'bad key' } } };
    return null;
  });
  expectRepliesUsed(() => upstream);
  return upstream;
}

/**
 * A task type's /v3 route, and the gates of its type the tests make: on `model` unless
 * `overrides` say otherwise.
 */
export function taskRoute(app: TestApp, path: string, defaults: { taskType: TaskType; model: string }) {
  return {
    model: defaults.model,
    gate: (user: TestUser, overrides: Record<string, unknown> = {}) =>
      createGate(app, user, { ...defaults, ...overrides }),
    /** POST `path` with `{ gateId, data, ...extra }`. */
    send: (
      user: TestUser,
      gateId: string,
      data: Record<string, unknown>,
      extra: Record<string, unknown> = {},
    ) => app.request(path, { method: 'POST', headers: user.auth, json: { gateId, data, ...extra } }),
  };
}

export type TaskRoute = ReturnType<typeof taskRoute>;

export type FallbackCase<T> = {
  /** The fallback model as the gate names it. */
  fallback: string;
  /** The model that answers, as the answer and the log name it (default: `fallback`). */
  to?: string;
  /** The request's data, carrying `fail` (the directive failing the gate's mock model with a 503). */
  data: (fail: string) => Record<string, unknown>;
  /** Reads the answer from the response (default: a 200 and its body). */
  answer?: (res: Response) => Promise<T>;
};

/**
 * A gate of the route's type on its mock model, falling back to another: a request on which the
 * mock model fails with a 503 is answered by the fallback, and its log entry holds the failed
 * attempt, then the good one.
 */
export async function expectFallsBack<T extends { id: string; model?: string | undefined }>(
  app: TestApp,
  user: TestUser,
  route: TaskRoute,
  c: FallbackCase<T>,
): Promise<T> {
  const from = route.model;
  const to = c.to ?? c.fallback;
  const gate = await route.gate(user, { routingStrategy: 'fallback', fallbackModels: [c.fallback] });
  const res = await route.send(user, gate.id, c.data(`[mock:fail=503@${from}]`));
  let answer: T;
  if (c.answer) answer = await c.answer(res);
  else {
    expect(res.status, await res.clone().text()).toBe(200);
    answer = (await res.json()) as T;
  }
  expect(answer.model).toBe(to);
  const entry = await logEntryOf(app, answer.id);
  expect(attemptsOf(entry).map((a) => [a.model, a.ok, a.status])).toEqual([
    [from, false, 503],
    [to, true, 200],
  ]);
  return answer;
}

export type BlockLimitCase = {
  /** One request's worst case, as its task kind reserves it. */
  worst: number;
  /** How many worst cases the limit holds. */
  fits: number;
  /** Room for half a worst case more, so that exactly `fits` requests pass whatever the rounding. */
  exact?: boolean;
  /** The decimals the limit is rounded to (default 10). */
  digits?: number;
  /** How far the spending read back may pass the limit by the rounding of its sum (default 0). */
  tolerance?: number;
  route: TaskRoute;
  /** The gate's settings besides its limit (another model, say). */
  gate?: Record<string, unknown>;
  /** Every request's data: the same for all 50. */
  data: Record<string, unknown>;
};

/**
 * Sends 50 requests at once to a gate of the route's type whose block limit holds `fits` worst cases: some pass (all
 * `fits` of them when `exact`), never more; the rest are refused with 402; the spending stays
 * within the limit; every request has one log entry, and the good ones are the ones that passed.
 */
export async function expectBlockLimitHolds(app: TestApp, user: TestUser, c: BlockLimitCase) {
  const limit = Number(((c.fits + (c.exact ? 0.5 : 0)) * c.worst).toFixed(c.digits ?? 10));
  const gate = await c.route.gate(user, { ...c.gate, spendingLimit: limit, spendingEnforcement: 'block' });
  const responses = await Promise.all(Array.from({ length: 50 }, () => c.route.send(user, gate.id, c.data)));
  const statuses = responses.map((r) => r.status);
  const passed = statuses.filter((s) => s === 200).length;
  if (c.exact) expect(passed).toBe(c.fits);
  else {
    expect(passed).toBeGreaterThan(0);
    expect(passed).toBeLessThanOrEqual(c.fits);
  }
  expect(statuses.filter((s) => s === 402)).toHaveLength(50 - passed);
  const spending = (await readGate(app, user, gate.id)).spendingCurrent;
  expect(spending).toBeLessThanOrEqual(limit + (c.tolerance ?? 0));
  const entries = await logEntriesOf(app, gate.id);
  expect(entries).toHaveLength(50);
  const paid = entries.filter((e) => e.success);
  expect(paid).toHaveLength(passed);
  return { limit, spending, paid };
}

/** Each input is refused with a 400 whose first issue names its field (`path`). */
export async function expectFieldIssues(
  send: (data: Record<string, unknown>) => Promise<Response>,
  cases: (readonly [Record<string, unknown>, string])[],
) {
  for (const [data, path] of cases) {
    const res = await send(data);
    expect(res.status, JSON.stringify(data)).toBe(400);
    const body = (await res.json()) as NativeError;
    expect(body.error.details?.issues?.[0]?.path, JSON.stringify(data)).toBe(path);
  }
}

/** A 400 whose message says why (a gate of another type, say). */
export async function expectRefused(res: Response, message: string) {
  expect(res.status).toBe(400);
  expect(((await res.json()) as NativeError).error.message).toContain(message);
}
