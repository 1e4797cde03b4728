import { createYoga } from 'graphql-yoga';
import type { Context } from 'hono';
import type { Config } from '../config.ts';
import { DomainError } from '../domain/errors.ts';
import { clientAddress, resolveActor } from '../http/auth.ts';
import type { GraphQLContext } from './context.ts';
import { schema } from './schema/index.ts';

export function createGraphQLHandler(config: Config) {
  const yoga = createYoga<{ hono: Context }, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    graphiql: config.env === 'development',
    landingPage: false,
    // Unexpected errors reach the client as "Unexpected error."; expected ones are typed results.
    maskedErrors: true,
    logging: config.env === 'test' ? false : 'info',
  });

  return async (c: Context): Promise<Response> => {
    const ctx: GraphQLContext = {
      config,
      actor: null,
      actorError: null,
      cookies: [],
      clientAddress: clientAddress(c, config),
    };
    const hasCredentials = c.req.header('authorization') !== undefined || c.req.header('cookie');
    if (hasCredentials) {
      try {
        ctx.actor = await resolveActor(c, { csrf: 'always' });
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        ctx.actorError = error;
      }
    }
    const response = await yoga.fetch(c.req.raw, { hono: c, ...ctx } as never);
    if (ctx.cookies.length === 0) return response;
    const headers = new Headers(response.headers);
    for (const cookie of ctx.cookies) headers.append('set-cookie', cookie);
    return new Response(response.body, { status: response.status, headers });
  };
}
