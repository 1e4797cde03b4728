import { credentialsSchema, signInSchema } from '@gatehouse/rules/account';
import { type Context, Hono } from 'hono';
import { getCookie } from 'hono/cookie';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { registerAccount, signIn, signOut } from '../domain/accounts.ts';
import { UnauthorizedError, ValidationError } from '../domain/errors.ts';
import { clientAddress, resolveActor, SESSION_COOKIE } from '../http/auth.ts';
import { isJsonContentType } from '../http/contentType.ts';
import { readJson } from '../http/errors.ts';
import { describe } from '../http/openapi.ts';
import { clearedSessionCookies, sessionCookies } from '../http/session.ts';
import { issuedApiKeyShape, userShape } from '../http/shapes.ts';
import { apiKeyView, userView } from '../http/views.ts';

/**
 * The credentials, from a JSON body only: a cross-site HTML form can send a form or text/plain
 * body without the browser asking first, and so sign a victim into the attacker's account.
 */
async function readCredentials(c: Context): Promise<unknown> {
  const type = c.req.header('content-type');
  if (!isJsonContentType(type)) {
    const named = type?.split(';')[0]?.trim() || 'none';
    throw new ValidationError([{ path: '', message: `Content-Type must be application/json, not ${named}` }]);
  }
  return readJson(c);
}

const tags = ['Accounts'];

export function authRoutes(config: Config) {
  const app = new Hono();

  /** Creates the account, signs it in, and issues its first API key (shown this once). */
  app.post(
    '/signup',
    describe({
      summary: 'Create an account, sign it in, and issue its first API key',
      description:
        'Open to the first account; after it, only where the server allows sign-up. Sets the session cookie.',
      tags,
      public: true,
      body: credentialsSchema,
      ok: {
        status: 201,
        description: 'The account, its CSRF token, and its first API key (the secret shown this once)',
        schema: z.object({ user: userShape, csrfToken: z.string(), apiKey: issuedApiKeyShape }),
      },
      errors: [400, 403, 409, 413, 429, 503],
    }),
    async (c) => {
      const credentials = await readCredentials(c);
      const { grant, issued } = await registerAccount(credentials, config, {
        address: clientAddress(c, config),
      });
      const { apiKey, key } = issued;
      for (const cookie of sessionCookies(grant, config)) c.header('set-cookie', cookie, { append: true });
      return c.json(
        { user: userView(grant.user), csrfToken: grant.csrfToken, apiKey: { ...apiKeyView(apiKey), key } },
        201,
      );
    },
  );

  app.post(
    '/signin',
    describe({
      summary: 'Sign in: sets the session cookie',
      tags,
      public: true,
      body: signInSchema,
      ok: {
        description: 'The account and the CSRF token its changes send in x-csrf-token',
        schema: z.object({ user: userShape, csrfToken: z.string(), expiresAt: z.iso.datetime() }),
      },
      errors: [400, 401, 413, 429],
    }),
    async (c) => {
      const credentials = await readCredentials(c);
      const grant = await signIn(credentials, config, { address: clientAddress(c, config) });
      for (const cookie of sessionCookies(grant, config)) c.header('set-cookie', cookie, { append: true });
      return c.json({ user: userView(grant.user), csrfToken: grant.csrfToken, expiresAt: grant.expiresAt });
    },
  );

  app.post(
    '/signout',
    describe({
      summary: 'Sign out: ends the session and clears its cookies',
      tags,
      public: true,
      ok: { status: 204, description: 'Signed out' },
      errors: [403],
    }),
    async (c) => {
      const token = getCookie(c, SESSION_COOKIE);
      // A live session ends only on a request that proves it comes from the dashboard (CSRF).
      if (token) {
        const actor = await resolveActor(c, { csrf: 'always' }).catch((error) => {
          if (error instanceof UnauthorizedError) return null; // expired already: just clear the cookies
          throw error;
        });
        if (actor?.sessionToken) await signOut(actor.sessionToken);
      }
      for (const cookie of clearedSessionCookies(config)) c.header('set-cookie', cookie, { append: true });
      return c.body(null, 204);
    },
  );

  return app;
}
