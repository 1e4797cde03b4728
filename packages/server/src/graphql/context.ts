import { GraphQLError } from 'graphql';
import type { Config } from '../config.ts';
import type { ArchitectDeps } from '../domain/architect.ts';
import type { ModelNames } from '../domain/catalog.ts';
import type { DomainError } from '../domain/errors.ts';
import type { SpendingCounters } from '../domain/spending.ts';
import type { Actor } from '../http/auth.ts';
import { DOCUMENT_LIMITS } from './protection.ts';

export type GraphQLContext = {
  config: Config;
  /** null when the caller is not signed in (or sent a cookie without its CSRF token). */
  actor: Actor | null;
  actorError: DomainError | null;
  /** Set-Cookie values the response should carry (sign-in and sign-out). */
  cookies: string[];
  /** The client's address, as the per-address limits count it (http/auth.ts clientAddress). */
  clientAddress: string;
  /** The data plane's spending counters (runtime.ts): gates read and change through them. */
  spending: SpendingCounters;
  /** How model names written by users resolve (runtime.ts). */
  models: ModelNames;
  /** What the Architect reads with (runtime.ts). */
  architect: ArchitectDeps;
  /** Rows this operation's lists have asked for so far (countRows). */
  listedRows: number;
};

/** The signed-in caller, or an UNAUTHENTICATED error saying why there is none. */
export function requireActor(ctx: GraphQLContext): Actor {
  if (ctx.actor) return ctx.actor;
  throw new GraphQLError(ctx.actorError?.message ?? 'Not signed in', {
    extensions: { code: ctx.actorError?.code === 'forbidden' ? 'FORBIDDEN' : 'UNAUTHENTICATED' },
  });
}

/**
 * Refuses a request whose cookie came without its CSRF token (a cross-site one), as REST does,
 * for the few fields that need no signed-in caller but must not act on a forged request.
 */
export function refuseForgedRequest(ctx: GraphQLContext): void {
  if (ctx.actorError?.code === 'forbidden') {
    throw new GraphQLError(ctx.actorError.message, { extensions: { code: 'FORBIDDEN' } });
  }
}

/**
 * Counts a list's page against the operation's rows, before it is read: graphql-armor's cost
 * counts `first: $n` as 1, so 15 aliases of `logs(first: $n)` with n = 200 would pass it.
 */
export function countRows(ctx: GraphQLContext, rows: number): void {
  ctx.listedRows += rows;
  if (ctx.listedRows > DOCUMENT_LIMITS.listedRows) {
    throw new GraphQLError(
      `An operation may list at most ${DOCUMENT_LIMITS.listedRows} rows over all its lists (the sum of their first); this one asks for ${ctx.listedRows}`,
      { extensions: { code: 'BAD_USER_INPUT' } },
    );
  }
}
