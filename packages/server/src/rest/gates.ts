import { gateCreateSchema, gatePatchSchema } from '@gatehouse/rules/gate';
import { Hono } from 'hono';
import { z } from 'zod';
import { parseWith } from '../domain/errors.ts';
import { getGate } from '../domain/gateCache.ts';
import {
  gateHistory,
  gateHistoryQuerySchema,
  rollbackBodySchema,
  rollbackGate,
} from '../domain/gateHistory.ts';
import {
  createGate,
  deleteGate,
  type GateDeps,
  gateListQuerySchema,
  gateState,
  listGates,
  updateGate,
} from '../domain/gates.ts';
import { readJson } from '../http/errors.ts';
import type { ActorEnv } from '../http/middleware.ts';
import { describe, ERRORS } from '../http/openapi.ts';
import { gateShape, paginationShape } from '../http/shapes.ts';
import { gateVersionView, gateView } from '../http/views.ts';

const tags = ['Gates'];
const gate = { description: 'The gate', schema: gateShape };

export function gateRoutes(deps: GateDeps) {
  const view = (gate: Parameters<typeof gateState>[0]) => gateView(gateState(gate, deps.spending));
  return new Hono<ActorEnv>()
    .post(
      '/',
      describe({
        summary: 'Create a gate',
        description:
          'Unknown and read-only fields are refused by name; `name`, `model` and `taskType` are required.',
        tags,
        body: gateCreateSchema.strict(),
        ok: { ...gate, status: 201 },
        errors: ERRORS.write,
      }),
      async (c) => {
        const gate = await createGate(c.var.actor.user.id, await readJson(c), deps);
        return c.json(view(gate), 201);
      },
    )
    .get(
      '/',
      describe({
        summary: 'List your gates',
        tags,
        query: gateListQuerySchema,
        ok: {
          description: 'A page of gates, newest first',
          schema: z.object({ gates: z.array(gateShape), pagination: paginationShape }),
        },
        errors: ERRORS.read,
      }),
      async (c) => {
        const page = await listGates(c.var.actor.user.id, c.req.query());
        return c.json({
          gates: page.items.map(view),
          pagination: { limit: page.limit, nextCursor: page.nextCursor, hasMore: page.hasMore },
        });
      },
    )
    .get('/:id', describe({ summary: 'Read a gate', tags, ok: gate, errors: ERRORS.read }), async (c) =>
      c.json(view(await getGate(c.var.actor.user.id, c.req.param('id')))),
    )
    .patch(
      '/:id',
      describe({
        summary: 'Change a gate',
        description: 'Only the fields sent change; each change is a new version in the history.',
        tags,
        body: gatePatchSchema.strict(),
        ok: gate,
        errors: ERRORS.write,
      }),
      async (c) => {
        const gate = await updateGate(c.var.actor.user.id, c.req.param('id'), await readJson(c), deps);
        return c.json(view(gate));
      },
    )
    .get(
      '/:id/history',
      describe({
        summary: "A gate's versions, newest first",
        tags,
        query: gateHistoryQuerySchema,
        ok: { description: 'A page of versions, each with what it changed' },
        errors: ERRORS.read,
      }),
      async (c) => {
        const page = await gateHistory(c.var.actor.user.id, c.req.param('id'), c.req.query());
        return c.json({
          versions: page.items.map(gateVersionView),
          pagination: { limit: page.limit, nextCursor: page.nextCursor, hasMore: page.hasMore },
        });
      },
    )
    .post(
      '/:id/rollback',
      describe({
        summary: 'Restore the settings of one of its versions',
        tags,
        body: rollbackBodySchema,
        ok: gate,
        errors: ERRORS.write,
      }),
      async (c) => {
        const userId = c.var.actor.user.id;
        await getGate(userId, c.req.param('id'));
        const { versionId } = parseWith(rollbackBodySchema, await readJson(c));
        return c.json(view(await rollbackGate(userId, c.req.param('id'), versionId, deps)));
      },
    )
    .delete(
      '/:id',
      describe({
        summary: 'Delete a gate',
        tags,
        ok: { status: 204, description: 'Deleted' },
        errors: ERRORS.write,
      }),
      async (c) => {
        await deleteGate(c.var.actor.user.id, c.req.param('id'));
        return c.body(null, 204);
      },
    );
}
