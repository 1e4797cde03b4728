import { Hono } from 'hono';
import { listAccounts, updateAccount } from '../domain/admin.ts';
import { readJson } from '../http/errors.ts';
import type { ActorEnv } from '../http/middleware.ts';
import { accountView } from '../http/views.ts';

/** The admin's routes (domain/admin.ts): anyone else gets 403. */
export const adminRoutes = new Hono<ActorEnv>()
  .get('/accounts', async (c) => {
    const accounts = await listAccounts(c.var.actor.user);
    return c.json({ accounts: accounts.map(accountView) });
  })
  .patch('/accounts/:id', async (c) => {
    const account = await updateAccount(c.var.actor.user, c.req.param('id'), await readJson(c));
    return c.json(accountView(account));
  });
