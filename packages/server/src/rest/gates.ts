import { Hono } from 'hono';
import { getGate } from '../domain/gateCache.ts';
import { createGate, deleteGate, gateState, listGates, updateGate } from '../domain/gates.ts';
import type { SpendingCounters } from '../domain/spending.ts';
import { readJson } from '../http/errors.ts';
import type { ActorEnv } from '../http/middleware.ts';
import { gateView } from '../http/views.ts';

export function gateRoutes(spending: SpendingCounters) {
  const view = (gate: Parameters<typeof gateState>[0]) => gateView(gateState(gate, spending));
  return new Hono<ActorEnv>()
    .post('/', async (c) => {
      const gate = await createGate(c.var.actor.user.id, await readJson(c));
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
      const gate = await updateGate(c.var.actor.user.id, c.req.param('id'), await readJson(c), spending);
      return c.json(view(gate));
    })
    .delete('/:id', async (c) => {
      await deleteGate(c.var.actor.user.id, c.req.param('id'));
      return c.body(null, 204);
    });
}
