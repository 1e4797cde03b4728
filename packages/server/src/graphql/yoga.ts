import { CSRF_HEADER } from '@gatehouse/rules/csrf';
import { createYoga } from 'graphql-yoga';
import type { Context } from 'hono';
import type { Config } from '../config.ts';
import type { ArchitectDeps } from '../domain/architect.ts';
import { DomainError } from '../domain/errors.ts';
import type { GateDeps } from '../domain/gates.ts';
import { clientAddress, resolveActor } from '../http/auth.ts';
import { isJsonContentType } from '../http/contentType.ts';
import type { GraphQLContext } from './context.ts';
import { protectionPlugins } from './protection.ts';
import { schema } from './schema/index.ts';

export function createGraphQLHandler(
  config: Config,
  { spending, models, architect }: GateDeps & { architect: ArchitectDeps },
) {
  const yoga = createYoga<{ hono: Context }, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    graphiql: config.env === 'development',
    landingPage: false,
    // Unexpected errors reach the client as "Unexpected error."; expected ones are typed results.
    maskedErrors: true,
    logging: config.env === 'test' ? false : 'info',
    // Same origin only, unless GATEHOUSE_CORS_ORIGINS names others: yoga's default reflects any
    // Origin with credentials, which lets every site read a signed-in dashboard's data.
    cors: (request) => {
      const origin = request.headers.get('origin');
      if (!origin || !config.corsOrigins.includes(origin)) return false;
      return {
        origin: [origin],
        credentials: true,
        methods: ['GET', 'POST'],
        allowedHeaders: ['content-type', 'authorization', CSRF_HEADER],
        maxAge: 600,
      };
    },
    multipart: false, // no uploads in the schema
    plugins: protectionPlugins({ introspection: config.graphqlIntrospection }),
  });

  return async (c: Context): Promise<Response> => {
    const type = c.req.header('content-type');
    if (c.req.method === 'POST' && !isJsonContentType(type)) return unsupportedMediaType(c);
    const ctx: GraphQLContext = {
      config,
      spending,
      models,
      architect,
      actor: null,
      actorError: null,
      cookies: [],
      clientAddress: clientAddress(c, config),
      listedRows: 0,
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

/**
 * A POST must be JSON: a cross-site HTML form can send form, multipart or text/plain bodies
 * without the browser asking first, and yoga would run them (a signIn from a form, say).
 */
function unsupportedMediaType(c: Context): Response {
  const named = c.req.header('content-type')?.split(';')[0]?.trim() || 'none';
  const message = `POST /graphql takes Content-Type: application/json, not ${named}`;
  return c.json({ errors: [{ message, extensions: { code: 'UNSUPPORTED_MEDIA_TYPE' } }] }, 415);
}
