import type { IncomingMessage } from 'node:http';
import { CSRF_HEADER } from '@gatehouse/rules/csrf';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { findSession } from '../domain/accounts.ts';
import { authenticateApiKey } from '../domain/apiKeys.ts';
import { AccountDisabledError, ForbiddenError, UnauthorizedError } from '../domain/errors.ts';
import type { ApiKey, User } from '../generated/prisma/client.ts';

export const SESSION_COOKIE = 'gh_session';

export type Actor = {
  user: User;
  via: 'api_key' | 'session';
  apiKeyId: string | null;
  /** The key the request came with (its limits apply beside the gate's); null for a session. */
  apiKey: ApiKey | null;
  sessionToken: string | null;
};

async function apiKeyActor(key: string): Promise<Actor> {
  const found = await authenticateApiKey(key);
  if (!found) throw new UnauthorizedError('API key is invalid or has been revoked');
  return {
    user: found.user,
    via: 'api_key',
    apiKeyId: found.apiKey.id,
    apiKey: found.apiKey,
    sessionToken: null,
  };
}

/**
 * Who is calling: an API key in `Authorization: Bearer` (or in `x-api-key`, as Anthropic's
 * clients send it), or a dashboard session cookie. A cookie alone never authorises a state
 * change: the CSRF header must match the session's token.
 */
export async function resolveActor(c: Context, opts: { csrf: 'unsafe-methods' | 'always' }): Promise<Actor> {
  const header = c.req.header('authorization');
  if (header !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) {
      throw new UnauthorizedError("Authorization header must be 'Bearer <API key>'");
    }
    return apiKeyActor(match[1]);
  }
  const apiKey = c.req.header('x-api-key')?.trim();
  if (apiKey) return apiKeyActor(apiKey);
  const token = getCookie(c, SESSION_COOKIE);
  if (token) {
    const session = await findSession(token);
    if (!session) throw new UnauthorizedError('Your session has expired; sign in again');
    if (session.user.disabledAt) throw new AccountDisabledError();
    const safe = c.req.method === 'GET' || c.req.method === 'HEAD';
    if ((opts.csrf === 'always' || !safe) && c.req.header(CSRF_HEADER) !== session.csrfToken) {
      throw new ForbiddenError(`Missing or wrong ${CSRF_HEADER} header`);
    }
    return { user: session.user, via: 'session', apiKeyId: null, apiKey: null, sessionToken: token };
  }
  throw new UnauthorizedError('Missing Authorization header: send Authorization: Bearer <API key>');
}

/** The configurations whose operator was told, once, that requests seem to come through a proxy. */
const proxyHinted = new WeakSet<object>();

/** Where a request handled in-process (a test's `app.request`) comes from: it has no socket. */
const NO_SOCKET = 'in-process';

/**
 * The client's address, for the limits that count per address: the socket's peer, or behind a
 * reverse proxy one trusts (GATEHOUSE_TRUST_PROXY=1) the last X-Forwarded-For entry, the one
 * the proxy itself appended. Earlier entries are whatever the client claimed.
 */
export function clientAddress(c: Context, opts: { trustProxy: boolean }): string {
  if (opts.trustProxy) {
    const forwarded = c.req.header('x-forwarded-for')?.split(',').at(-1)?.trim();
    if (forwarded) return forwarded;
  } else if (!proxyHinted.has(opts) && c.req.header('x-forwarded-for') !== undefined) {
    proxyHinted.add(opts);
    console.error(
      'A request came with X-Forwarded-For while GATEHOUSE_TRUST_PROXY is off: the sign-up and sign-in limits count the address it came from, which behind a reverse proxy is the proxy, one address for every client. Behind a reverse proxy of your own, set GATEHOUSE_TRUST_PROXY=1.',
    );
  }
  if (!(c.env as { incoming?: IncomingMessage } | undefined)?.incoming) return NO_SOCKET;
  return getConnInfo(c).remote.address ?? NO_SOCKET;
}
