import { Hono } from 'hono';
import { createApiKey, listApiKeys, revokeApiKey, updateApiKey } from '../domain/apiKeys.ts';
import { readJson } from '../http/errors.ts';
import type { ActorEnv } from '../http/middleware.ts';
import { apiKeyView } from '../http/views.ts';

export const apiKeyRoutes = new Hono<ActorEnv>()
  .post('/', async (c) => {
    const { apiKey, key } = await createApiKey(c.var.actor.user.id, await readJson(c));
    return c.json({ ...apiKeyView(apiKey), key }, 201);
  })
  .get('/', async (c) => {
    const keys = await listApiKeys(c.var.actor.user.id);
    return c.json({ apiKeys: keys.map(apiKeyView) });
  })
  .patch('/:id', async (c) => {
    const apiKey = await updateApiKey(c.var.actor.user.id, c.req.param('id'), await readJson(c));
    return c.json(apiKeyView(apiKey));
  })
  .delete('/:id', async (c) => {
    await revokeApiKey(c.var.actor.user.id, c.req.param('id'));
    return c.body(null, 204);
  });
