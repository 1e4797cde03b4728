/**
 * Agent gates in GraphQL (issue 13): Gate.subGates and Gate.connections, the sub-gate mutations,
 * and sessions with their requests. The same domain functions as REST.
 */

import { GraphQLError } from 'graphql';
import { prisma } from '../../db/client.ts';
import {
  endSession,
  findSession,
  listSessions,
  type SessionState,
  sessionCursor,
  sessionListQuerySchema,
  sessionOf,
  sessionRequests,
} from '../../domain/agentSessions.ts';
import { NotFoundError, ServiceUnavailableError, ValidationError } from '../../domain/errors.ts';
import { encodeCursor } from '../../domain/logs.ts';
import {
  attachSubGate,
  detachSubGate,
  type SubGateWithAgent,
  type SubGateWithGate,
  visibleToolsOf,
} from '../../domain/subGates.ts';
import { forwardConnection, userInput } from '../arguments.ts';
import { builder } from '../builder.ts';
import { countRows, requireActor } from '../context.ts';
import { SessionStatus } from './enums.ts';
import { GateRef } from './gate.ts';
import { LogEntryRef } from './log.ts';

const SubGateRef = builder.objectRef<SubGateWithGate>('SubGate').implement({
  description: 'A gate an agent gate delegates one role (a step of its work) to',
  fields: (t) => ({
    role: t.exposeString('role', { description: 'What x-gatehouse-action names to route a request here' }),
    description: t.exposeString('description', { nullable: true }),
    visibleTools: t.stringList({
      nullable: true,
      description: 'The tool names this step is shown; null is every tool',
      resolve: (s) => visibleToolsOf(s),
    }),
    gate: t.field({ type: GateRef, description: 'The sub-gate', resolve: (s) => s.subGate }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const GateConnectionRef = builder.objectRef<SubGateWithAgent>('GateConnection').implement({
  description: 'An agent gate that uses this gate as a sub-gate, and the role it plays there',
  fields: (t) => ({
    role: t.exposeString('role'),
    description: t.exposeString('description', { nullable: true }),
    agentGate: t.field({ type: GateRef, resolve: (s) => s.agentGate }),
  }),
});

const ORDER = [{ createdAt: 'asc' as const }, { role: 'asc' as const }];

builder.objectFields(GateRef, (t) => ({
  subGates: t.field({
    type: [SubGateRef],
    description: 'An agent gate’s sub-gates, in the order they were attached; empty on a standard gate',
    resolve: (g) =>
      prisma.subGate.findMany({ where: { agentGateId: g.id }, include: { subGate: true }, orderBy: ORDER }),
  }),
  connections: t.field({
    type: [GateConnectionRef],
    description: 'The agent gates that use this gate as a sub-gate',
    resolve: (g) =>
      prisma.subGate.findMany({
        where: { subGateId: g.id, agentGate: { userId: g.userId } },
        include: { agentGate: true },
        orderBy: ORDER,
      }),
  }),
}));

const SubGateInput = builder.inputType('SubGateInput', {
  fields: (t) => ({
    subGateId: t.id({ required: true, description: 'One of your gates, not the agent gate itself' }),
    role: t.string({ required: true, description: '1 to 64 characters of a-z, 0-9, _ and -' }),
    description: t.string(),
    visibleTools: t.stringList({ description: 'null (or absent) is every tool' }),
  }),
});

const AgentSessionRef = builder.objectRef<SessionState>('AgentSession').implement({
  description: 'One multi-turn agent run through an agent gate, named by the client’s session id',
  fields: (t) => ({
    id: t.exposeID('id'),
    key: t.exposeString('key', { description: 'The client’s session id (x-gatehouse-session-id)' }),
    gateId: t.exposeID('gateId'),
    status: t.expose('status', {
      type: SessionStatus,
      description:
        'IDLE and FAILING are computed: ACTIVE with no request for the gate’s sessionIdleMinutes, or whose latest request failed',
    }),
    requestCount: t.exposeInt('requestCount', { description: 'Requests that reached a provider' }),
    refusedCount: t.exposeInt('refusedCount', {
      description: 'Requests refused before any provider call (a bad field, an unknown step, a limit)',
    }),
    spendingCurrent: t.exposeFloat('spendingCurrent'),
    sessionSpendingLimit: t.exposeFloat('sessionSpendingLimit', { nullable: true }),
    promptTokens: t.exposeInt('promptTokens'),
    completionTokens: t.exposeInt('completionTokens'),
    topic: t.exposeString('topic', {
      nullable: true,
      description: 'The first user message, cut to 200 characters',
    }),
    toolsCalled: t.exposeStringList('toolsCalled'),
    subGatesUsed: t.exposeStringList('subGatesUsed', { description: 'The roles of the sub-gates it used' }),
    firstRequestAt: t.expose('firstRequestAt', { type: 'DateTime' }),
    lastRequestAt: t.expose('lastRequestAt', { type: 'DateTime' }),
    endedAt: t.expose('endedAt', { type: 'DateTime', nullable: true }),
    requests: t.connection({
      type: LogEntryRef,
      description: 'Its log entries, oldest first',
      resolve: (s, args, ctx) =>
        userInput(async () => {
          if (args.last != null || args.before != null) {
            throw new ValidationError([
              { path: 'last', message: 'paging backwards is not supported; use first and after' },
            ]);
          }
          countRows(ctx, args.first ?? 100);
          const page = await sessionRequests(requireActor(ctx).user.id, s.key, {
            gateId: s.gateId,
            ...(args.first != null && { limit: args.first }),
            ...(args.after && { cursor: args.after }),
          });
          return forwardConnection(page, (node) => encodeCursor(node.createdAt, node.id), args.after);
        }),
    }),
  }),
});

builder.queryFields((t) => ({
  sessions: t.connection({
    type: AgentSessionRef,
    description: 'The sessions of one of your gates, newest activity first',
    args: {
      gateId: t.arg.id({ required: true }),
      status: t.arg({ type: SessionStatus }),
    },
    resolve: (_root, args, ctx) =>
      userInput(async () => {
        if (args.last != null || args.before != null) {
          throw new ValidationError([
            { path: 'last', message: 'paging backwards is not supported; use first and after' },
          ]);
        }
        const limit = sessionListQuerySchema.shape.limit.safeParse(args.first ?? undefined);
        if (limit.success) countRows(ctx, limit.data);
        const page = await listSessions(requireActor(ctx).user.id, String(args.gateId), {
          ...(args.first != null && { limit: args.first }),
          ...(args.after && { cursor: args.after }),
          ...(args.status && { status: args.status }),
        }).catch((error) => {
          // Another user's gate, as a missing one: said, not masked as an unexpected error.
          if (error instanceof NotFoundError) {
            throw new GraphQLError(error.message, { extensions: { code: 'NOT_FOUND' } });
          }
          throw error;
        });
        return forwardConnection(page, sessionCursor, args.after);
      }),
  }),
  session: t.field({
    type: AgentSessionRef,
    nullable: true,
    description:
      'One of your sessions by its key, or null; gateId is needed when the key is used on several gates',
    args: { key: t.arg.string({ required: true }), gateId: t.arg.id() },
    resolve: (_root, args, ctx) =>
      userInput(async () => {
        try {
          return sessionOf(
            await findSession(requireActor(ctx).user.id, args.key, args.gateId && String(args.gateId)),
          );
        } catch (error) {
          if (error instanceof NotFoundError) return null;
          throw error;
        }
      }),
  }),
}));

builder.mutationFields((t) => ({
  attachSubGate: t.field({
    type: SubGateRef,
    description: 'Attaches one of your gates to your agent gate under a role',
    errors: { types: [ValidationError, NotFoundError, ServiceUnavailableError] },
    args: { gateId: t.arg.id({ required: true }), input: t.arg({ type: SubGateInput, required: true }) },
    resolve: (_root, { gateId, input }, ctx) =>
      attachSubGate(requireActor(ctx).user.id, String(gateId), {
        ...input,
        subGateId: String(input.subGateId),
      }),
  }),
  detachSubGate: t.field({
    type: 'ID',
    description: 'Detaches a sub-gate from your agent gate; returns the sub-gate’s id',
    errors: { types: [NotFoundError] },
    args: { gateId: t.arg.id({ required: true }), subGateId: t.arg.id({ required: true }) },
    resolve: async (_root, { gateId, subGateId }, ctx) => {
      await detachSubGate(requireActor(ctx).user.id, String(gateId), String(subGateId));
      return String(subGateId);
    },
  }),
  endSession: t.field({
    type: AgentSessionRef,
    description: 'Ends your session (COMPLETED); refused when it is completed or over its budget already',
    errors: { types: [ValidationError, NotFoundError] },
    args: { key: t.arg.string({ required: true }), gateId: t.arg.id() },
    resolve: async (_root, { key, gateId }, ctx) =>
      sessionOf(await endSession(requireActor(ctx).user.id, key, gateId && String(gateId))),
  }),
}));
