/**
 * What the task-type tests (/v3/embeddings, image, tts, stt, moderation, ocr, video) share: a local
 * provider stand-in checking keys as the real ones do, a fallback read back from the log, and a
 * block limit that holds under 50 concurrent requests.
 */
import { expect } from 'vitest';
import type { TestApp } from './app.ts';
import { attemptsOf, logEntriesOf, logEntryOf, type NativeError, readGate } from './chat.ts';
import {
  expectRepliesUsed,
  type RecordedRequest,
  startUpstream,
  type Upstream,
} from './emulators/upstream.ts';
import type { TestUser } from './factories.ts';

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

/** The log entry of a request holds a failed attempt on `from` (503), then a good one on `to`. */
export async function expectFellBack(app: TestApp, requestId: string, from: string, to: string) {
  const entry = await logEntryOf(app, requestId);
  expect(attemptsOf(entry).map((a) => [a.model, a.ok, a.status])).toEqual([
    [from, false, 503],
    [to, true, 200],
  ]);
}

/** A request that fell back from `from` to `to`: answered 200 by `to`, both attempts logged. */
export async function expectFallback<T extends { id: string; model: string }>(
  app: TestApp,
  res: Response,
  from: string,
  to: string,
): Promise<T> {
  expect(res.status, await res.clone().text()).toBe(200);
  const answer = (await res.json()) as T;
  expect(answer.model).toBe(to);
  await expectFellBack(app, answer.id, from, to);
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
  /** Makes the gate, given its block limit. */
  gate: (limit: { spendingLimit: number; spendingEnforcement: 'block' }) => Promise<{ id: string }>;
  send: (gateId: string) => Promise<Response>;
};

/**
 * Sends 50 requests at once to a gate whose block limit holds `fits` worst cases: some pass (all
 * `fits` of them when `exact`), never more; the rest are refused with 402; the spending stays
 * within the limit; every request has one log entry, and the good ones are the ones that passed.
 */
export async function expectBlockLimitHolds(app: TestApp, user: TestUser, c: BlockLimitCase) {
  const limit = Number(((c.fits + (c.exact ? 0.5 : 0)) * c.worst).toFixed(c.digits ?? 10));
  const gate = await c.gate({ spendingLimit: limit, spendingEnforcement: 'block' });
  const responses = await Promise.all(Array.from({ length: 50 }, () => c.send(gate.id)));
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
