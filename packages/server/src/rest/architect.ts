import { Hono } from 'hono';
import { type ArchitectDeps, analyseGate, suggestModels } from '../domain/architect.ts';
import { type GateDeps, gateState } from '../domain/gates.ts';
import { readJson } from '../http/errors.ts';
import type { ActorEnv } from '../http/middleware.ts';
import { gateView } from '../http/views.ts';

/** The Architect over REST: a recommendation for a gate to be, and a stored gate's analysis. */
export function architectRoutes(deps: GateDeps & { architect: ArchitectDeps }) {
  const architect = { ...deps.architect, configured: deps.models.configured };
  return new Hono<ActorEnv>()
    .post('/suggestions', async (c) =>
      c.json(await suggestModels(c.var.actor.user.id, await readJson(c), architect)),
    )
    .post('/:id/analysis', async (c) => {
      // No body: the gate's own settings, over the default window.
      const body = await readJson(c, undefined, { optional: true });
      const { gate, ...analysis } = await analyseGate(
        c.var.actor.user.id,
        c.req.param('id'),
        body,
        architect,
      );
      return c.json({ ...analysis, gate: gateView(gateState(gate, deps.spending)) });
    });
}
