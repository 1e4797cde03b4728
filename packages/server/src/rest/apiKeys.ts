import { apiKeyCreateSchema, apiKeyRollSchema, apiKeyUpdateSchema } from '@gatehouse/rules/account';
import { Hono } from 'hono';
import { z } from 'zod';
import { createApiKey, listApiKeys, revokeApiKey, rollApiKey, updateApiKey } from '../domain/apiKeys.ts';
import type { SpendingCounters } from '../domain/spending.ts';
import { readJson } from '../http/errors.ts';
import type { ActorEnv } from '../http/middleware.ts';
import { describe, ERRORS } from '../http/openapi.ts';
import { apiKeyShape, issuedApiKeyShape } from '../http/shapes.ts';
import { apiKeyView } from '../http/views.ts';

const tags = ['API keys'];

/** The keys API; their spending read through the ledger (`spending`), which may hold it unwritten. */
export const apiKeyRoutes = (spending: SpendingCounters) =>
  new Hono<ActorEnv>()
    .post(
      '/',
      describe({
        summary: 'Create an API key',
        tags,
        body: apiKeyCreateSchema,
        ok: {
          status: 201,
          description: 'The key, its secret in `key` (shown this once)',
          schema: issuedApiKeyShape,
        },
        errors: ERRORS.write,
      }),
      async (c) => {
        const { apiKey, key } = await createApiKey(c.var.actor.user.id, await readJson(c));
        return c.json({ ...apiKeyView(apiKey, spending), key }, 201);
      },
    )
    .get(
      '/',
      describe({
        summary: 'List your API keys (never their secrets)',
        tags,
        ok: {
          description: 'Your keys, revoked ones too',
          schema: z.object({ apiKeys: z.array(apiKeyShape) }),
        },
        errors: ERRORS.read,
      }),
      async (c) => {
        const keys = await listApiKeys(c.var.actor.user.id);
        return c.json({ apiKeys: keys.map((k) => apiKeyView(k, spending)) });
      },
    )
    .patch(
      '/:id',
      describe({
        summary: "Change an API key's name, limits, scope, expiry or metadata",
        tags,
        body: apiKeyUpdateSchema,
        ok: { description: 'The key as it is now', schema: apiKeyShape },
        errors: ERRORS.write,
      }),
      async (c) => {
        const apiKey = await updateApiKey(c.var.actor.user.id, c.req.param('id'), await readJson(c));
        return c.json(apiKeyView(apiKey, spending));
      },
    )
    .post(
      '/:id/roll',
      describe({
        summary: 'Roll an API key: a new secret for the same key, the old one valid for `graceSeconds`',
        tags,
        body: apiKeyRollSchema,
        ok: { description: 'The key, its new secret in `key` (shown this once)', schema: issuedApiKeyShape },
        errors: ERRORS.write,
      }),
      async (c) => {
        const body = await readJson(c, undefined, { optional: true });
        const { apiKey, key } = await rollApiKey(c.var.actor.user.id, c.req.param('id'), body);
        return c.json({ ...apiKeyView(apiKey, spending), key });
      },
    )
    .delete(
      '/:id',
      describe({
        summary: 'Revoke an API key',
        tags,
        ok: { status: 204, description: 'Revoked' },
        errors: ERRORS.write,
      }),
      async (c) => {
        await revokeApiKey(c.var.actor.user.id, c.req.param('id'));
        return c.body(null, 204);
      },
    );
