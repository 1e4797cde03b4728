/**
 * Reading and ending agent sessions (issue 13). A session is one agent run through an agent gate,
 * named by the client's session id (its key); the data plane creates and updates the rows. Every
 * query is scoped to the owner: another user's session or gate is a 404.
 */
import {
  isSessionKey,
  SESSION_STATUSES,
  type SessionStatus,
  type StoredSessionStatus,
} from '@gatehouse/rules/agent';
import { isUuid } from '@gatehouse/rules/ids';
import { z } from 'zod';
import { publish } from '../db/changes.ts';
import { prisma, sql } from '../db/client.ts';
import type { AgentSession, Gate, Prisma } from '../generated/prisma/client.ts';
import { NotFoundError, parseWith, ValidationError } from './errors.ts';
import { getGate } from './gateCache.ts';
import {
  decodeCursor,
  encodeCursor,
  entryOf,
  type LogEntrySummary,
  SUMMARY_COLUMNS,
  type SummaryRow,
} from './logs.ts';

const MINUTE_MS = 60_000;

/**
 * A session's status as of `now`: a stored `active` one is `idle` once the gate's
 * sessionIdleMinutes have passed since its last request, else `failing` while its latest request
 * failed or was refused. Neither is stored; the next request decides again.
 */
export function sessionStatus(
  row: { status: string; lastRequestAt: Date; lastRequestFailed?: boolean },
  gate: { sessionIdleMinutes: number },
  now: Date = new Date(),
): SessionStatus {
  const status = row.status as StoredSessionStatus;
  if (status !== 'active') return status;
  if (now.getTime() - row.lastRequestAt.getTime() >= gate.sessionIdleMinutes * MINUTE_MS) return 'idle';
  return row.lastRequestFailed ? 'failing' : 'active';
}

export type SessionWithGate = AgentSession & { gate: Gate };

/** A session as the APIs show it: status computed, money as numbers. */
export function sessionOf(row: SessionWithGate, now: Date = new Date()) {
  return {
    id: row.id,
    key: row.sessionKey,
    gateId: row.gateId,
    status: sessionStatus(row, row.gate, now),
    requestCount: row.requestCount,
    refusedCount: row.refusedCount,
    spendingCurrent: Number(row.spendingCurrent),
    sessionSpendingLimit:
      row.gate.sessionSpendingLimit === null ? null : Number(row.gate.sessionSpendingLimit),
    promptTokens: row.promptTokens,
    completionTokens: row.completionTokens,
    topic: row.topic,
    toolsCalled: row.toolsCalled,
    subGatesUsed: row.subGatesUsed,
    firstRequestAt: row.firstRequestAt,
    lastRequestAt: row.lastRequestAt,
    endedAt: row.endedAt,
  };
}

export type SessionState = ReturnType<typeof sessionOf>;

const cursorSchema = z.string().transform((c, ctx) => {
  const decoded = decodeCursor(c);
  if (!decoded) ctx.addIssue({ code: 'custom', message: 'must be a cursor from a previous page' });
  return decoded as { createdAt: Date; id: string };
});

export const sessionListQuerySchema = z.strictObject({
  status: z.enum(SESSION_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: cursorSchema.optional(),
});

/** The cursor of a session in the listing: its last activity and id. */
export const sessionCursor = (s: Pick<SessionState, 'lastRequestAt' | 'id'>) =>
  encodeCursor(s.lastRequestAt, s.id);

/**
 * A page of the sessions of the caller's gate, newest activity first (keyset on last_request_at,
 * id). `status` filters the status as shown, idle included: active and idle split the stored
 * `active` rows at now minus the gate's sessionIdleMinutes.
 */
export async function listSessions(userId: string, gateId: string, raw: unknown, now: Date = new Date()) {
  const q = parseWith(sessionListQuerySchema, raw);
  const gate = await getGate(userId, gateId);
  const idleSince = new Date(now.getTime() - gate.sessionIdleMinutes * MINUTE_MS);
  const where: Prisma.AgentSessionWhereInput[] = [{ gateId: gate.id, userId }];
  if (q.status === 'idle') where.push({ status: 'active', lastRequestAt: { lte: idleSince } });
  else if (q.status === 'active') {
    where.push({ status: 'active', lastRequestAt: { gt: idleSince }, lastRequestFailed: false });
  } else if (q.status === 'failing') {
    where.push({ status: 'active', lastRequestAt: { gt: idleSince }, lastRequestFailed: true });
  } else if (q.status) where.push({ status: q.status });
  if (q.cursor) {
    const { createdAt: at, id } = q.cursor;
    where.push({ OR: [{ lastRequestAt: { lt: at } }, { lastRequestAt: at, id: { lt: id } }] });
  }
  const rows = await prisma.agentSession.findMany({
    where: { AND: where },
    orderBy: [{ lastRequestAt: 'desc' }, { id: 'desc' }],
    take: q.limit + 1,
  });
  const hasMore = rows.length > q.limit;
  const items = rows.slice(0, q.limit).map((row) => sessionOf({ ...row, gate }, now));
  const last = items.at(-1);
  return { items, limit: q.limit, hasMore, nextCursor: hasMore && last ? sessionCursor(last) : null };
}

/**
 * The caller's session with this key; `gateId` picks the gate when the key is used on several of
 * them (without it that is a 400 naming gateId). Anything not the caller's is a 404.
 */
export async function findSession(
  userId: string,
  key: string,
  gateId?: string | null | undefined,
): Promise<SessionWithGate> {
  if (gateId != null && gateId !== '' && !isUuid(gateId)) {
    throw new ValidationError([{ path: 'gateId', message: 'must be a gate UUID' }]);
  }
  const rows = isSessionKey(key)
    ? await prisma.agentSession.findMany({
        where: { userId, sessionKey: key, ...(gateId ? { gateId } : {}) },
        include: { gate: true },
        take: 2,
      })
    : [];
  const [row] = rows;
  if (!row) throw new NotFoundError('Session');
  if (rows.length > 1) {
    throw new ValidationError([
      { path: 'gateId', message: 'is required: this session id is used on several of your gates' },
    ]);
  }
  return row;
}

export const sessionRequestsQuerySchema = z.strictObject({
  gateId: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: cursorSchema.optional(),
});

/** A step of a session's timeline: its entry, with what went in and what came out, as text. */
export type SessionRequest = LogEntrySummary & {
  hiddenTools: string[];
  input: string | null;
  output: string | null;
};

/**
 * The log entries of the caller's session, oldest first (keyset on created_at, id), with their
 * tool calls and results, inferred action, tokens, cost and latency. Entries still in the log
 * writer's queue appear once written.
 */
export async function sessionRequests(userId: string, key: string, raw: unknown) {
  const q = parseWith(sessionRequestsQuerySchema, raw);
  const session = await findSession(userId, key, q.gateId);
  const params: unknown[] = [session.id, userId];
  let after = '';
  if (q.cursor) {
    params.push(q.cursor.createdAt.toISOString(), q.cursor.id);
    after = `AND (created_at, id) > ($3::timestamptz, $4::uuid)`;
  }
  params.push(q.limit + 1);
  const rows = await sql().query<
    SummaryRow & { hidden_tools: string[] | null; sent: unknown; answer: unknown }
  >(
    `SELECT ${SUMMARY_COLUMNS}, hidden_tools, COALESCE(provider_request, client_request) AS sent,
       provider_response AS answer FROM log_entries
     WHERE gate_session_id = $1::uuid AND user_id = $2::uuid ${after}
     ORDER BY created_at, id LIMIT $${params.length}`,
    params,
  );
  const hasMore = rows.length > q.limit;
  const items: SessionRequest[] = rows.slice(0, q.limit).map((row) => ({
    ...entryOf(row),
    hiddenTools: row.hidden_tools ?? [],
    input: stepInput(row.sent),
    output: stepOutput(row.answer),
  }));
  const last = items.at(-1);
  return {
    session,
    items,
    limit: q.limit,
    hasMore,
    nextCursor: hasMore && last ? encodeCursor(last.createdAt, last.id) : null,
  };
}

/**
 * Ends the caller's session: completed, with its end time. A session completed or over its
 * budget already is a 400; a later request to a completed session is flagged runaway by the
 * data plane.
 */
export async function endSession(
  userId: string,
  key: string,
  gateId?: string | null | undefined,
  now: Date = new Date(),
): Promise<SessionWithGate> {
  const session = await findSession(userId, key, gateId);
  const { count } = await prisma.agentSession.updateMany({
    where: { id: session.id, status: { notIn: ['completed', 'budget_exceeded'] } },
    data: { status: 'completed', endedAt: now },
  });
  const after = await prisma.agentSession.findUniqueOrThrow({
    where: { id: session.id },
    include: { gate: true },
  });
  if (count === 0) {
    throw new ValidationError(
      [{ path: 'sessionId', message: `is ${after.status.replace('_', ' ')} already and cannot be ended` }],
      `The session is ${after.status.replace('_', ' ')} already`,
    );
  }
  await publish({ kind: 'agentSession', userId, sessionId: session.id });
  return after;
}

const STEP_TEXT = 2000;

const cut = (text: string) => (text.length > STEP_TEXT ? `${text.slice(0, STEP_TEXT)}…` : text);

/** The text of a message's content: a string, or the text parts of an array (OpenAI, Anthropic). */
function textOf(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  const parts = content.flatMap((part) => {
    if (typeof part === 'string') return [part];
    if (part && typeof part === 'object') {
      const p = part as Record<string, unknown>;
      if (typeof p.text === 'string') return [p.text];
      if (p.type === 'tool_result' || p.type === 'function_call_output')
        return [textOf(p.content ?? p.output) ?? ''];
    }
    return [];
  });
  return parts.length > 0 ? parts.join('\n') : null;
}

const asRecord = (value: unknown) =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;

/**
 * What a step sent, as text: its last message (the user's turn or a tool's result) in the chat
 * formats, else its `input` or `prompt`; null when the request has neither.
 */
export function stepInput(sent: unknown): string | null {
  const body = asRecord(sent);
  if (!body) return null;
  const messages = body.messages ?? body.contents ?? (Array.isArray(body.input) ? body.input : null);
  if (Array.isArray(messages) && messages.length > 0) {
    const last = asRecord(messages.at(-1));
    const text = last ? textOf(last.content ?? last.parts ?? last.output) : null;
    if (text !== null) return cut(last?.role ? `${String(last.role)}: ${text}` : text);
  }
  for (const field of ['input', 'prompt', 'text', 'query']) {
    if (typeof body[field] === 'string') return cut(body[field] as string);
  }
  return null;
}

/**
 * What a step answered, as text: the assistant's message (OpenAI, Anthropic, Responses, Gemini),
 * or the tools it called; null without an answer.
 */
export function stepOutput(answer: unknown): string | null {
  const body = asRecord(answer);
  if (!body) return null;
  const calls: string[] = [];
  const texts: string[] = [];
  const choice = Array.isArray(body.choices) ? asRecord(body.choices[0]) : null;
  const message = asRecord(choice?.message);
  if (message) {
    const text = textOf(message.content);
    if (text) texts.push(text);
    for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
      const fn = asRecord(asRecord(call)?.function);
      if (fn) calls.push(`${String(fn.name)}(${String(fn.arguments ?? '')})`);
    }
  }
  const blocks = Array.isArray(body.content) ? body.content : Array.isArray(body.output) ? body.output : [];
  for (const block of blocks) {
    const b = asRecord(block);
    if (!b) continue;
    if (typeof b.text === 'string') texts.push(b.text);
    else if (b.type === 'tool_use') calls.push(`${String(b.name)}(${JSON.stringify(b.input ?? {})})`);
    else if (b.type === 'function_call') calls.push(`${String(b.name)}(${String(b.arguments ?? '')})`);
    else if (Array.isArray(b.content)) texts.push(textOf(b.content) ?? '');
  }
  const candidate = Array.isArray(body.candidates) ? asRecord(body.candidates[0]) : null;
  const geminiParts = asRecord(candidate?.content)?.parts;
  if (Array.isArray(geminiParts)) texts.push(textOf(geminiParts) ?? '');
  const shown = [...texts.filter((t) => t !== ''), ...calls.map((c) => `→ ${c}`)];
  return shown.length > 0 ? cut(shown.join('\n')) : null;
}
