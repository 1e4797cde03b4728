/** Helpers for the data-plane tests: chat requests in both wire formats, SSE, log entries. */
import { expect } from 'vitest';
import type { TestApp } from './app.ts';
import type { TestUser } from './factories.ts';

export type NativeAnswer = {
  id: string;
  content: string | null;
  model: string;
  finishReason: string;
  toolCalls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  usage: { promptTokens: number; completionTokens: number; totalTokens: number; estimated?: boolean };
  costUsd: number;
  latencyMs: number;
};

export type NativeError = {
  error: { code: string; message: string; details?: { issues?: { path: string; message: string }[] } };
};

export type OpenAIError = {
  error: { message: string; type: string; param: string | null; code: string | null };
};

export const say = (text: string) => [{ role: 'user', content: text }];

/** POST /v3/chat with `data` as given (messages default to one user message). */
export function chat(
  app: TestApp,
  user: TestUser,
  gateId: string,
  data: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) {
  return app.request('/v3/chat', {
    method: 'POST',
    headers: user.auth,
    json: { gateId, data: { messages: say('hello'), ...data }, ...extra },
  });
}

/** POST /v1/chat/completions; the gate goes in x-gatehouse-gate-id unless `gateId` is null. */
export function completions(
  app: TestApp,
  user: TestUser,
  gateId: string | null,
  body: Record<string, unknown> = {},
) {
  return app.request('/v1/chat/completions', {
    method: 'POST',
    headers: { ...user.auth, ...(gateId && { 'x-gatehouse-gate-id': gateId }) },
    json: { model: 'mock/echo', messages: say('hello'), ...body },
  });
}

/** A /v3/chat answer that must have succeeded. */
export async function answerOf(res: Response): Promise<NativeAnswer> {
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as NativeAnswer;
}

/** The `data:` payloads of a Server-Sent Events body, JSON-parsed except the final `[DONE]`. */
export async function sseEvents(res: Response): Promise<unknown[]> {
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length))
        .join('\n');
      return data === '[DONE]' ? data : JSON.parse(data);
    });
}

/** The log entry of one request (its id is the x-gatehouse-request-id header), once written. */
export async function logEntryOf(app: TestApp, requestId: string | null) {
  expect(requestId, 'the response names its request id').toBeTruthy();
  await app.runtime.logs.drain();
  const entry = await app.db.prisma.logEntry.findUnique({ where: { id: requestId as string } });
  expect(entry, `log entry ${requestId}`).not.toBeNull();
  return entry as NonNullable<typeof entry>;
}

/** Every log entry of a gate, oldest first, once written. */
export async function logEntriesOf(app: TestApp, gateId: string) {
  await app.runtime.logs.drain();
  return app.db.prisma.logEntry.findMany({ where: { gateId }, orderBy: { createdAt: 'asc' } });
}

/** All log entries of a user, however they were made. */
export async function logCountOf(app: TestApp, user: TestUser) {
  await app.runtime.logs.drain();
  return app.db.prisma.logEntry.count({ where: { userId: user.id } });
}

export type LoggedAttempt = {
  model: string;
  provider: string;
  ok: boolean;
  status: number | null;
  error: string | null;
  latencyMs: number;
  /** Embeddings: the answer's vector length, and the note when a fallback changed it. */
  dimensions?: number;
  shapeNote?: string;
};

export const attemptsOf = (entry: { attempts: unknown }) => entry.attempts as LoggedAttempt[];

/**
 * The gate as its page reads it, once what was charged is in the database (a shared ledger writes
 * behind, within a fraction of a second).
 */
export async function readGate(app: TestApp, user: TestUser, id: string) {
  await app.runtime.spending.settled();
  const res = await app.request(`/v1/gates/${id}`, { headers: user.auth });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Record<string, unknown> & {
    spendingCurrent: number;
    spendingStatus: string;
    spendingLimit: number | null;
  };
}
