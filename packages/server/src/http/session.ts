import { CSRF_COOKIE } from '@gatehouse/rules/csrf';
import { serialize } from 'hono/utils/cookie';
import type { Config } from '../config.ts';
import type { SessionGrant } from '../domain/accounts.ts';
import { SESSION_COOKIE } from './auth.ts';

/** Set-Cookie values that start a dashboard session (REST sign-in and GraphQL signIn alike). */
export function sessionCookies(grant: SessionGrant, config: Config): string[] {
  const common = {
    path: '/',
    sameSite: 'Lax' as const,
    secure: config.secureCookies,
    expires: grant.expiresAt,
  };
  return [
    serialize(SESSION_COOKIE, grant.token, { ...common, httpOnly: true }),
    serialize(CSRF_COOKIE, grant.csrfToken, common),
  ];
}

export function clearedSessionCookies(config: Config): string[] {
  const common = { path: '/', sameSite: 'Lax' as const, secure: config.secureCookies, maxAge: 0 };
  return [serialize(SESSION_COOKIE, '', { ...common, httpOnly: true }), serialize(CSRF_COOKIE, '', common)];
}
