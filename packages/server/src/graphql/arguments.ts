import { GraphQLError } from 'graphql';
import { ValidationError } from '../domain/errors.ts';

/**
 * Query arguments that break the rules are the caller's mistake: BAD_USER_INPUT, with the issues.
 * The one way every query that takes more than an id reports a bad argument.
 */
export async function userInput<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ValidationError) {
      throw new GraphQLError(error.message, { extensions: { code: 'BAD_USER_INPUT', issues: error.issues } });
    }
    throw error;
  }
}

/**
 * A forward-only page as a Relay connection: each item with its cursor, and whether more lie
 * beyond it (a page reached with `after` has some before it).
 */
export function forwardConnection<T>(
  page: { items: T[]; hasMore: boolean },
  cursorOf: (item: T) => string,
  after: string | null | undefined,
) {
  const edges = page.items.map((node) => ({ node, cursor: cursorOf(node) }));
  return {
    edges,
    pageInfo: {
      hasNextPage: page.hasMore,
      hasPreviousPage: Boolean(after),
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  };
}
