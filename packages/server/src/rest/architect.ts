import { analysisOptionsSchema, suggestionInputSchema } from '@gatehouse/rules/architect';
import { Hono } from 'hono';
import { type ArchitectDeps, analyseGate, suggestModels } from '../domain/architect.ts';
import { type GateDeps, gateState } from '../domain/gates.ts';
import { readJson } from '../http/errors.ts';
import type { ActorEnv } from '../http/middleware.ts';
import { describe, ERRORS } from '../http/openapi.ts';
import { gateView } from '../http/views.ts';

const tags = ['Architect'];

/** The Architect over REST: a recommendation for a gate to be, and a stored gate's analysis. */
export function architectRoutes(deps: GateDeps & { architect: ArchitectDeps }) {
  const architect = { ...deps.architect, configured: deps.models.configured };
  return new Hono<ActorEnv>()
    .post(
      '/suggestions',
      describe({
        summary: 'Recommend models for a gate to be',
        description:
          "Scores the catalog's models for a task and a preset (or custom weights); changes nothing.",
        tags,
        body: suggestionInputSchema,
        ok: { description: 'The recommended model, its fallbacks and the scores' },
        errors: [400, 401, 413, 502, 504],
      }),
      async (c) => c.json(await suggestModels(c.var.actor.user.id, await readJson(c), architect)),
    )
    .post(
      '/:id/analysis',
      describe({
        summary: 'Analyse a stored gate',
        description:
          "Scores the gate's models over its own traffic and stores the analysis on the gate; the body is optional.",
        tags,
        body: analysisOptionsSchema,
        ok: { description: 'The analysis, and the gate as stored with it' },
        errors: [...ERRORS.write, 502, 504],
      }),
      async (c) => {
        // No body: the gate's own settings, over the default window.
        const body = await readJson(c, undefined, { optional: true });
        const { gate, ...analysis } = await analyseGate(
          c.var.actor.user.id,
          c.req.param('id'),
          body,
          architect,
        );
        return c.json({ ...analysis, gate: gateView(gateState(gate, deps.spending)) });
      },
    );
}
