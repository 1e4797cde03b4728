/** Who a data-plane request is for, and the agent headers it carries, as the pipeline reads them. */
import { isUuid } from '@gatehouse/rules/ids';
import { END_USER_HEADER, endUserSchema } from '@gatehouse/rules/logs';
import type { Context } from 'hono';
import type { TaskCaller } from '../dataplane/caller.ts';
import { ValidationError } from '../domain/errors.ts';
import type { Sent } from '../providers/types.ts';
import { bodyBytesOf } from './errors.ts';
import type { ActorEnv } from './middleware.ts';

/** Names the client's session on every route (a /v3 body may say `sessionId` instead). */
export const SESSION_HEADER = 'x-gatehouse-session-id';
/** Names the step of an orchestrated agent gate: the role of the sub-gate that answers. */
export const ACTION_HEADER = 'x-gatehouse-action';
/** Names the log entry a request replays (the dashboard's Replay sends it); its entry links back. */
export const REPLAY_HEADER = 'x-gatehouse-replay-of';

/**
 * Where a body names its end user: OpenAI's `user` field, Anthropic's `metadata.user_id`; the
 * native routes name one by the header only.
 */
export type EndUserField = 'user' | 'metadata.user_id';

/** The body's end user at `field`, where it is a string (the route's own schema judges any other). */
function bodyEndUser(body: unknown, field: EndUserField): unknown {
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as { user?: unknown; metadata?: { user_id?: unknown } | null };
  const value = field === 'user' ? b.user : b.metadata?.user_id;
  return typeof value === 'string' ? value : undefined;
}

/**
 * The request's end user: the x-gatehouse-user header, else the body's field; none when neither
 * names one. Too long (or holding NUL) is a 400 naming where it came from.
 */
export function endUserOf(c: Context, body: unknown, field?: EndUserField): string | undefined {
  const header = c.req.header(END_USER_HEADER);
  const [path, value] =
    header !== undefined ? [END_USER_HEADER, header] : [field, field && bodyEndUser(body, field)];
  if (value === undefined || value === '' || path === undefined) return undefined;
  const parsed = endUserSchema.safeParse(value);
  if (!parsed.success) {
    throw new ValidationError([{ path, message: parsed.error.issues[0]?.message ?? 'is not valid' }]);
  }
  return parsed.data;
}

/**
 * The caller of `endpoint`, with `body` as read (its log entry keeps it if it is refused), and
 * the end user it names (at `endUserField` of a drop-in body, or in the header).
 */
export function callerOf(
  c: Context<ActorEnv>,
  endpoint: string,
  body: unknown,
  endUserField?: EndUserField,
): TaskCaller {
  const sessionKey = c.req.header(SESSION_HEADER);
  const action = c.req.header(ACTION_HEADER);
  const endUser = endUserOf(c, body, endUserField);
  const replayOf = c.req.header(REPLAY_HEADER);
  if (replayOf !== undefined && !isUuid(replayOf)) {
    throw new ValidationError([{ path: REPLAY_HEADER, message: 'must be the id of a log entry (a UUID)' }]);
  }
  const { apiKey } = c.var.actor;
  return {
    userId: c.var.actor.user.id,
    endpoint,
    body,
    ...(apiKey && { apiKey }),
    ...(endUser !== undefined && { endUser }),
    ...(sessionKey !== undefined && { sessionKey }),
    ...(action !== undefined && { action }),
    ...(replayOf !== undefined && { replayOf: replayOf.toLowerCase() }),
  };
}

/** Headers a drop-in route forwards to a provider of its own family: the betas the client asked for. */
const BETA_HEADERS = ['anthropic-beta', 'openai-beta'];

/**
 * Query parameters a drop-in route forwards to a provider of its own family: Anthropic's `beta`
 * (Claude Code's `?beta=true`). Any other was appended to the provider's URL as sent, where it
 * could name whatever the provider reads from a query.
 */
const FORWARDED_QUERY = ['beta'];

/** What a drop-in request carries besides its body, for a provider of its own family. */
export function sentOf(c: Context): Sent {
  const headers: Record<string, string> = {};
  for (const name of BETA_HEADERS) {
    const value = c.req.header(name);
    if (value !== undefined) headers[name] = value;
  }
  const query: Record<string, string> = {};
  for (const name of FORWARDED_QUERY) {
    const value = c.req.query(name);
    if (value !== undefined) query[name] = value;
  }
  const bodyBytes = bodyBytesOf(c);
  return { headers, query, ...(bodyBytes !== undefined && { bodyBytes }) };
}
