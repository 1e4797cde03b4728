import { createMiddleware } from 'hono/factory';
import { type Actor, resolveActor } from './auth.ts';

export type ActorEnv = { Variables: { actor: Actor } };

/** Every /v1 and /v3 route but sign-in requires a caller; REST checks CSRF on unsafe methods. */
export const requireActor = createMiddleware<ActorEnv>(async (c, next) => {
  c.set('actor', await resolveActor(c, { csrf: 'unsafe-methods' }));
  await next();
});
