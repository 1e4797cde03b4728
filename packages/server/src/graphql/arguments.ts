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
