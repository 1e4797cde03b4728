/**
 * Agent gates' REST routes (issue 13): sub-gates and sessions of a gate under /v1/gates/:id, and
 * one session by the client's id under /v1/sessions/:sessionId (?gateId= when the id is used on
 * several gates). The rules live in domain/subGates.ts and domain/agentSessions.ts.
 */
import { Hono } from 'hono';
import {
  endSession,
  findSession,
  listSessions,
  sessionOf,
  sessionRequests,
} from '../domain/agentSessions.ts';
import { attachSubGate, detachSubGate, listSubGates } from '../domain/subGates.ts';
import { readJson } from '../http/errors.ts';
import type { ActorEnv } from '../http/middleware.ts';
import { sessionRequestView, sessionView, subGateView } from '../http/views.ts';

/** Mounted at /v1/gates, beside the gate routes. */
export const agentGateRoutes = new Hono<ActorEnv>()
  .get('/:id/sub-gates', async (c) => {
    const subGates = await listSubGates(c.var.actor.user.id, c.req.param('id'));
    return c.json({ subGates: subGates.map(subGateView) });
  })
  .post('/:id/sub-gates', async (c) => {
    const subGate = await attachSubGate(c.var.actor.user.id, c.req.param('id'), await readJson(c));
    return c.json(subGateView(subGate), 201);
  })
  .delete('/:id/sub-gates/:subGateId', async (c) => {
    await detachSubGate(c.var.actor.user.id, c.req.param('id'), c.req.param('subGateId'));
    return c.body(null, 204);
  })
  .get('/:id/sessions', async (c) => {
    const page = await listSessions(c.var.actor.user.id, c.req.param('id'), c.req.query());
    return c.json({
      sessions: page.items.map(sessionView),
      pagination: { limit: page.limit, nextCursor: page.nextCursor, hasMore: page.hasMore },
    });
  });

/** Mounted at /v1/sessions. */
export const sessionRoutes = new Hono<ActorEnv>()
  .get('/:sessionId', async (c) => {
    const session = await findSession(c.var.actor.user.id, c.req.param('sessionId'), c.req.query('gateId'));
    return c.json(sessionView(sessionOf(session)));
  })
  .get('/:sessionId/requests', async (c) => {
    const page = await sessionRequests(c.var.actor.user.id, c.req.param('sessionId'), c.req.query());
    return c.json({
      session: sessionView(sessionOf(page.session)),
      requests: page.items.map(sessionRequestView),
      pagination: { limit: page.limit, nextCursor: page.nextCursor, hasMore: page.hasMore },
    });
  })
  .post('/:sessionId/end', async (c) => {
    const session = await endSession(c.var.actor.user.id, c.req.param('sessionId'), c.req.query('gateId'));
    return c.json(sessionView(sessionOf(session)));
  });
