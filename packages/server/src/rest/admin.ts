import { accountUpdateSchema } from '@gatehouse/rules/account';
import { Hono } from 'hono';
import { z } from 'zod';
import { listAccounts, updateAccount } from '../domain/admin.ts';
import { readJson } from '../http/errors.ts';
import type { ActorEnv } from '../http/middleware.ts';
import { describe, ERRORS } from '../http/openapi.ts';
import { accountShape } from '../http/shapes.ts';
import { accountView } from '../http/views.ts';

const tags = ['Admin'];

/** The admin's routes (domain/admin.ts): anyone else gets 403. */
export const adminRoutes = new Hono<ActorEnv>()
  .get(
    '/accounts',
    describe({
      summary: 'List every account (the admin only)',
      tags,
      ok: { description: 'The accounts', schema: z.object({ accounts: z.array(accountShape) }) },
      errors: [...ERRORS.read, 403],
    }),
    async (c) => {
      const accounts = await listAccounts(c.var.actor.user);
      return c.json({ accounts: accounts.map(accountView) });
    },
  )
  .patch(
    '/accounts/:id',
    describe({
      summary: "Change an account's plan, or disable or enable it (the admin only)",
      tags,
      body: accountUpdateSchema,
      ok: { description: 'The account', schema: accountShape },
      errors: ERRORS.write,
    }),
    async (c) => {
      const account = await updateAccount(c.var.actor.user, c.req.param('id'), await readJson(c));
      return c.json(accountView(account));
    },
  );
