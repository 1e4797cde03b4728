/**
 * Agent sessions at request time: the first request with an unseen session id opens the session;
 * each request's worst case is reserved against the session's budget before the provider is
 * called, and its actual cost, tokens, tool calls and role settled after. Every decision is one
 * SQL statement on the session's row, so concurrent requests (and several gateway processes on
 * one PostgreSQL) can never spend past the budget. The read side (lists, ends) is
 * domain/agentSessions.ts.
 */
import { randomUUID } from 'node:crypto';
import { isSessionKey, SESSION_KEY_MESSAGE } from '@gatehouse/rules/agent';
import { sql } from '../db/client.ts';
import { DomainError, ValidationError } from '../domain/errors.ts';
import type { Gate } from '../generated/prisma/client.ts';
import { MAX_INT, MAX_USD } from './usage.ts';

/** The same tool call this many times in a row marks the session runaway. */
export const RUNAWAY_REPEATS = 5;
const TOPIC_LENGTH = 200;

export type OpenSession = {
  id: string;
  key: string;
  /** The status before this request; `runaway` when this request makes it so. */
  status: string;
  /** This request arrives after the session ended, or past its request limit: it passes, flagged. */
  runaway: boolean;
  limit: number | null;
  /** What this request has reserved against the budget so far. */
  reserved: number;
};

type Row = { id: string; status: string; request_count: number };

export function checkSessionKey(key: string, path: string): string {
  if (!isSessionKey(key)) throw new ValidationError([{ path, message: SESSION_KEY_MESSAGE }]);
  return key;
}

function budgetExceeded(key: string): DomainError {
  return new DomainError(
    'session_budget_exceeded',
    `Session "${key}" has reached its spending budget; end it and start a new session, or raise the gate's sessionSpendingLimit`,
    { scope: 'session', sessionId: key },
  );
}

/**
 * The agent gate's session for this request, opened on first use. A session whose budget is spent
 * refuses the request (402 session_budget_exceeded); one that was ended, or is past its request
 * limit, lets it pass and is marked runaway when the request settles.
 */
export async function openSession(
  gate: Gate,
  userId: string,
  key: string,
  topic: string | null,
): Promise<OpenSession> {
  const session = await sessionFor(gate, userId, key, topic);
  if (session.status === 'budget_exceeded') throw budgetExceeded(key);
  return session;
}

/**
 * The agent gate's session with this key, opened if it is not yet, whatever its status: what
 * openSession checks before letting a request in, and what a refused request is counted in.
 */
export async function sessionFor(
  gate: Gate,
  userId: string,
  key: string,
  topic: string | null,
): Promise<OpenSession> {
  const now = new Date();
  await sql().query(
    `INSERT INTO agent_sessions (id, gate_id, user_id, session_key, status, topic, first_request_at, last_request_at, created_at)
     VALUES ($1::uuid, $2::uuid, $3::uuid, $4, 'active', $5, $6, $6, $6)
     ON CONFLICT (gate_id, session_key) DO NOTHING`,
    [randomUUID(), gate.id, userId, key, topic?.slice(0, TOPIC_LENGTH) ?? null, now],
    { prepare: true },
  );
  const [row] = await sql().query<Row>(
    'SELECT id, status, request_count FROM agent_sessions WHERE gate_id = $1::uuid AND session_key = $2',
    [gate.id, key],
    { prepare: true },
  );
  if (!row) throw new Error(`session ${key} of gate ${gate.id} vanished as it was opened`);
  const max = gate.maxRequestsPerSession;
  const limit = gate.sessionSpendingLimit === null ? null : Number(gate.sessionSpendingLimit);
  return {
    id: row.id,
    key,
    status: row.status,
    runaway: row.status === 'completed' || (max !== null && row.request_count >= max),
    limit,
    reserved: 0,
  };
}

/**
 * Reserves `amount` of the session's budget. Refused (402) when it does not fit beside what is
 * spent and reserved; when even an idle session could not fit it, the budget is spent for good
 * and the session becomes budget_exceeded.
 */
export async function reserveSession(session: OpenSession, amount: number): Promise<void> {
  if (session.limit === null) return;
  const rows = await sql().query(
    `UPDATE agent_sessions SET spending_reserved = spending_reserved + $2::numeric
     WHERE id = $1::uuid AND status <> 'budget_exceeded'
       AND spending_current + spending_reserved + $2::numeric <= $3::numeric
     RETURNING id`,
    [session.id, amount.toFixed(10), session.limit.toFixed(10)],
    { prepare: true },
  );
  if (rows.length === 0) throw await refuseSession(session, amount, false);
  session.reserved += amount;
}

/**
 * The refusal of a request the session's budget cannot fit. When even an idle session could not
 * fit it (no request of the session holds anything: `idle`, or no hold in the row), the budget is
 * spent for good and the session becomes budget_exceeded.
 */
export async function refuseSession(
  session: OpenSession,
  amount: number,
  idle: boolean,
): Promise<DomainError> {
  await sql().query(
    `UPDATE agent_sessions SET status = 'budget_exceeded'
     WHERE id = $1::uuid AND ($4::boolean OR spending_reserved = 0) AND spending_current + $2::numeric > $3::numeric`,
    [session.id, amount.toFixed(10), (session.limit ?? 0).toFixed(10), idle],
  );
  return budgetExceeded(session.key);
}

/**
 * Lets go of `amount` this request reserved on the session, when another limit it passes through
 * refused it: its reservations are all or none.
 */
export async function releaseSession(session: OpenSession, amount: number): Promise<void> {
  if (session.limit === null || amount === 0) return;
  await sql().query(
    'UPDATE agent_sessions SET spending_reserved = GREATEST(spending_reserved - $2::numeric, 0) WHERE id = $1::uuid',
    [session.id, amount.toFixed(10)],
    { prepare: true },
  );
  session.reserved = Math.max(0, session.reserved - amount);
}

export type SessionSettlement = {
  costUsd: number;
  promptTokens: number;
  completionTokens: number;
  /** Tool names the answer called. */
  tools: string[];
  /** The answer's tool calls, name and arguments, as one key: repeats of it in a row are counted. */
  toolCallKey: string | null;
  /** The sub-gate role that answered, if any. */
  role: string | null;
  /** The request failed (after reaching a provider): the session shows FAILING until one succeeds. */
  failed?: boolean;
};

/**
 * Counts a request refused before any provider call (a bad field, an unknown step, a limit) in
 * its session: its time is the session's last activity, and the session shows FAILING until a
 * request succeeds.
 */
export async function noteRefusal(session: OpenSession): Promise<void> {
  await sql().query(
    `UPDATE agent_sessions SET refused_count = LEAST(refused_count::bigint + 1, ${MAX_INT})::integer,
       last_request_at = $2, last_request_failed = true
     WHERE id = $1::uuid`,
    [session.id, new Date()],
    { prepare: true },
  );
}

/**
 * Settles a request on its session: its reservation released, its cost, tokens, tools and role
 * added, the last tool call's repeats counted; the status moves to runaway (ended, over the
 * request limit, a repeating tool call) or budget_exceeded (the budget reached). Answers the
 * status it leaves, for the response header.
 */
export async function settleSession(session: OpenSession, s: SessionSettlement): Promise<string> {
  const [row] = await sql().query<{ status: string }>(
    `UPDATE agent_sessions SET
       spending_reserved = GREATEST(spending_reserved - $2::numeric, 0),
       spending_current = LEAST(spending_current + $3::numeric, ${MAX_USD}),
       request_count = request_count + 1,
       prompt_tokens = LEAST(prompt_tokens::bigint + $4::integer, ${MAX_INT})::integer,
       completion_tokens = LEAST(completion_tokens::bigint + $5::integer, ${MAX_INT})::integer,
       tools_called = ARRAY(SELECT DISTINCT unnest(tools_called || $6::text[]) ORDER BY 1),
       sub_gates_used = CASE WHEN $7::text IS NULL OR $7::text = ANY(sub_gates_used) THEN sub_gates_used
                             ELSE array_append(sub_gates_used, $7::text) END,
       tool_call_repeats = CASE WHEN $8::text IS NULL THEN 0
                                WHEN last_tool_call = $8::text THEN tool_call_repeats + 1 ELSE 1 END,
       last_tool_call = $8::text,
       last_request_at = $9,
       last_request_failed = $12,
       status = CASE
         WHEN status = 'budget_exceeded' THEN status
         WHEN $10::numeric IS NOT NULL AND spending_current + $3::numeric >= $10::numeric THEN 'budget_exceeded'
         WHEN $11::boolean THEN 'runaway'
         WHEN $8::text IS NOT NULL AND last_tool_call = $8::text AND tool_call_repeats + 1 >= ${RUNAWAY_REPEATS}
           THEN 'runaway'
         ELSE status END
     WHERE id = $1::uuid
     RETURNING status`,
    [
      session.id,
      session.reserved.toFixed(10),
      s.costUsd.toFixed(10),
      s.promptTokens,
      s.completionTokens,
      s.tools,
      s.role,
      s.toolCallKey,
      new Date(),
      session.limit === null ? null : session.limit.toFixed(10),
      session.runaway,
      s.failed ?? false,
    ],
    { prepare: true },
  );
  session.reserved = 0;
  return row?.status ?? session.status;
}
