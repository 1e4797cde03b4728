import { Hono } from 'hono';
import { parseWith } from '../domain/errors.ts';
import { getGate } from '../domain/gateCache.ts';
import { gateHistory, rollbackBodySchema, rollbackGate } from '../domain/gateHistory.ts';
import { createGate, deleteGate, type GateDeps, gateState, listGates, updateGate } from '../domain/gates.ts';
import { readJson } from '../http/errors.ts';
import type { ActorEnv } from '../http/middleware.ts';
import { gateVersionView, gateView } from '../http/views.ts';

export function gateRoutes(deps: GateDeps) {
  const view = (gate: Parameters<typeof gateState>[0]) => gateView(gateState(gate, deps.spending));
  return new Hono<ActorEnv>()
    .post('/', async (c) => {
      const gate = await createGate(c.var.actor.user.id, await readJson(c), deps);
      return c.json(view(gate), 201);
    })
    .get('/', async (c) => {
      const page = await listGates(c.var.actor.user.id, c.req.query());
      return c.json({
        gates: page.items.map(view),
        pagination: { limit: page.limit, nextCursor: page.nextCursor, hasMore: page.hasMore },
      });
    })
    .get('/:id', async (c) => c.json(view(await getGate(c.var.actor.user.id, c.req.param('id')))))
    .patch('/:id', async (c) => {
      const gate = await updateGate(c.var.actor.user.id, c.req.param('id'), await readJson(c), deps);
      return c.json(view(gate));
    })
    .get('/:id/history', async (c) => {
      const page = await gateHistory(c.var.actor.user.id, c.req.param('id'), c.req.query());
      return c.json({
        versions: page.items.map(gateVersionView),
        pagination: { limit: page.limit, nextCursor: page.nextCursor, hasMore: page.hasMore },
      });
    })
    .post('/:id/rollback', async (c) => {
      const userId = c.var.actor.user.id;
      await getGate(userId, c.req.param('id'));
      const { versionId } = parseWith(rollbackBodySchema, await readJson(c));
      return c.json(view(await rollbackGate(userId, c.req.param('id'), versionId, deps)));
    })
    .delete('/:id', async (c) => {
      await deleteGate(c.var.actor.user.id, c.req.param('id'));
      return c.body(null, 204);
    });
}
