/**
 * Agent gates' REST routes (issue 13): sub-gates and sessions of a gate under /v1/gates/:id, and
 * one session by the client's id under /v1/sessions/:sessionId (?gateId= when the id is used on
 * several gates). The rules live in domain/subGates.ts and domain/agentSessions.ts.
 */
import { subGateInputSchema } from '@gatehouse/rules/agent';
import { Hono } from 'hono';
import { z } from 'zod';
import {
  endSession,
  findSession,
  listSessions,
  sessionListQuerySchema,
  sessionOf,
  sessionRequests,
  sessionRequestsQuerySchema,
} from '../domain/agentSessions.ts';
import { attachSubGate, detachSubGate, listSubGates } from '../domain/subGates.ts';
import { readJson } from '../http/errors.ts';
import type { ActorEnv } from '../http/middleware.ts';
import { describe, ERRORS } from '../http/openapi.ts';
import { logEntryShape, paginationShape, sessionShape, subGateShape } from '../http/shapes.ts';
import { sessionRequestView, sessionView, subGateView } from '../http/views.ts';

const tags = ['Agent gates'];

/** `?gateId=` where a session id is used on several gates. */
const sessionQuery = sessionRequestsQuerySchema.pick({ gateId: true });

/** Mounted at /v1/gates, beside the gate routes. */
export const agentGateRoutes = new Hono<ActorEnv>()
  .get(
    '/:id/sub-gates',
    describe({
      summary: "An agent gate's sub-gates",
      tags,
      ok: {
        description: 'The sub-gates, with their roles',
        schema: z.object({ subGates: z.array(subGateShape) }),
      },
      errors: ERRORS.read,
    }),
    async (c) => {
      const subGates = await listSubGates(c.var.actor.user.id, c.req.param('id'));
      return c.json({ subGates: subGates.map(subGateView) });
    },
  )
  .post(
    '/:id/sub-gates',
    describe({
      summary: 'Attach a gate to an agent gate as a sub-gate, with a role',
      tags,
      body: subGateInputSchema,
      ok: { status: 201, description: 'The sub-gate', schema: subGateShape },
      errors: ERRORS.write,
    }),
    async (c) => {
      const subGate = await attachSubGate(c.var.actor.user.id, c.req.param('id'), await readJson(c));
      return c.json(subGateView(subGate), 201);
    },
  )
  .delete(
    '/:id/sub-gates/:subGateId',
    describe({
      summary: 'Detach a sub-gate',
      tags,
      ok: { status: 204, description: 'Detached' },
      errors: ERRORS.write,
    }),
    async (c) => {
      await detachSubGate(c.var.actor.user.id, c.req.param('id'), c.req.param('subGateId'));
      return c.body(null, 204);
    },
  )
  .get(
    '/:id/sessions',
    describe({
      summary: "An agent gate's sessions, most recently active first",
      tags,
      query: sessionListQuerySchema,
      ok: {
        description: 'A page of sessions',
        schema: z.object({ sessions: z.array(sessionShape), pagination: paginationShape }),
      },
      errors: ERRORS.read,
    }),
    async (c) => {
      const page = await listSessions(c.var.actor.user.id, c.req.param('id'), c.req.query());
      return c.json({
        sessions: page.items.map(sessionView),
        pagination: { limit: page.limit, nextCursor: page.nextCursor, hasMore: page.hasMore },
      });
    },
  );

/** Mounted at /v1/sessions. */
export const sessionRoutes = new Hono<ActorEnv>()
  .get(
    '/:sessionId',
    describe({
      summary: 'A session, by the id its client sent in x-gatehouse-session-id',
      tags,
      query: sessionQuery,
      ok: { description: 'The session', schema: sessionShape },
      errors: ERRORS.read,
    }),
    async (c) => {
      const session = await findSession(c.var.actor.user.id, c.req.param('sessionId'), c.req.query('gateId'));
      return c.json(sessionView(sessionOf(session)));
    },
  )
  .get(
    '/:sessionId/requests',
    describe({
      summary: "A session's requests, in order",
      tags,
      query: sessionRequestsQuerySchema,
      ok: {
        description: 'The session and a page of its requests (log entries, with the tools each hid)',
        schema: z.object({
          session: sessionShape,
          requests: z.array(
            logEntryShape.extend({
              hidden_tools: z.array(z.string()),
              input: z.string().nullable().describe('What went in, as text: the last message, or the input'),
              output: z
                .string()
                .nullable()
                .describe('What came out, as text: the answer, or the tools called'),
            }),
          ),
          pagination: paginationShape,
        }),
      },
      errors: ERRORS.read,
    }),
    async (c) => {
      const page = await sessionRequests(c.var.actor.user.id, c.req.param('sessionId'), c.req.query());
      return c.json({
        session: sessionView(sessionOf(page.session)),
        requests: page.items.map(sessionRequestView),
        pagination: { limit: page.limit, nextCursor: page.nextCursor, hasMore: page.hasMore },
      });
    },
  )
  .post(
    '/:sessionId/end',
    describe({
      summary: 'End a session: its next request starts a new one',
      tags,
      query: sessionQuery,
      ok: { description: 'The session, ended', schema: sessionShape },
      errors: ERRORS.write,
    }),
    async (c) => {
      const session = await endSession(c.var.actor.user.id, c.req.param('sessionId'), c.req.query('gateId'));
      return c.json(sessionView(sessionOf(session)));
    },
  );
