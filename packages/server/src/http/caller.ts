/** Who a data-plane request is for, and the agent headers it carries, as the pipeline reads them. */
import type { Context } from 'hono';
import type { TaskCaller } from '../dataplane/caller.ts';
import type { Forward } from '../providers/types.ts';
import type { ActorEnv } from './middleware.ts';

/** Names the client's session on every route (a /v3 body may say `sessionId` instead). */
export const SESSION_HEADER = 'x-gatehouse-session-id';
/** Names the step of an orchestrated agent gate: the role of the sub-gate that answers. */
export const ACTION_HEADER = 'x-gatehouse-action';

/** The caller of `endpoint`, with `body` as read (its log entry keeps it if it is refused). */
export function callerOf(c: Context<ActorEnv>, endpoint: string, body: unknown): TaskCaller {
  const sessionKey = c.req.header(SESSION_HEADER);
  const action = c.req.header(ACTION_HEADER);
  const { apiKey } = c.var.actor;
  return {
    userId: c.var.actor.user.id,
    endpoint,
    body,
    ...(apiKey && { apiKey }),
    ...(sessionKey !== undefined && { sessionKey }),
    ...(action !== undefined && { action }),
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
export function sentOf(c: Context): Pick<Forward, 'headers' | 'query'> {
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
  return { headers, query };
}
