/**
 * An agent gate's part of a request: its session (opened, budgeted, settled in sessions.ts), the
 * gate that answers (the agent gate itself in observability mode; in orchestrated mode the
 * sub-gate whose role the client names, or, dynamically, the one the agent gate's own model picks),
 * and which of the request's tools that gate may see.
 */
import { ValidationError } from '../domain/errors.ts';
import { listSubGates, visibleToolsOf } from '../domain/subGates.ts';
import type { Gate } from '../generated/prisma/client.ts';
import type { TaskCaller } from './caller.ts';
import { checkSessionKey, type OpenSession, openSession } from './sessions.ts';

export type SubGateChoice = { role: string; description: string | null };

/** What an agent gate makes of a request before it is planned. */
export type AgentRoute = {
  /** The gate whose models, parameters, prompt and limits answer. */
  answering: Gate;
  /** The sub-gate's role (orchestrated), or null (observability: the action is inferred later). */
  role: string | null;
  /** The tools the answering gate may see; null: all. */
  visibleTools: string[] | null;
  session: OpenSession | null;
};

/**
 * Asks the agent gate's own model which role fits the conversation (dynamic orchestration):
 * provided by the data plane, which runs it as a request of its own in the session.
 */
export type RolePicker = (
  gate: Gate,
  caller: TaskCaller,
  session: OpenSession | null,
  conversation: unknown,
  roles: SubGateChoice[],
) => Promise<string>;

/** A gate's own visible tools: null is every tool (Prisma reads the jsonb column's NULL as null). */
const gateVisibleTools = (gate: Gate) => gate.visibleTools as string[] | null;

/**
 * Resolves an agent gate's request: opens its session (the x-gatehouse-session-id header, or a
 * /v3 body's sessionId), and picks the answering gate. An unknown role is a 400 listing the roles.
 */
export async function routeAgent(
  gate: Gate,
  caller: TaskCaller,
  request: { sessionId?: string | undefined; action?: string | undefined },
  opts: { topic: string | null; conversation: unknown; pickRole: RolePicker | null },
): Promise<AgentRoute> {
  const key = caller.sessionKey ?? request.sessionId;
  const session =
    key === undefined
      ? null
      : await openSession(
          gate,
          caller.userId,
          checkSessionKey(key, caller.sessionKey !== undefined ? 'x-gatehouse-session-id' : 'sessionId'),
          opts.topic,
        );
  if (gate.agentMode !== 'orchestrated') {
    return { answering: gate, role: null, visibleTools: gateVisibleTools(gate), session };
  }
  const subGates = await listSubGates(caller.userId, gate.id);
  const roles = subGates.map((s) => s.role);
  let role = caller.action ?? request.action;
  if (role === undefined) {
    if (gate.orchestration !== 'dynamic' || !opts.pickRole) {
      throw new ValidationError([
        {
          path: 'x-gatehouse-action',
          message: `name the step with the x-gatehouse-action header (or "action" in a /v3 body): one of ${roles.join(', ') || '(this agent gate has no sub-gates)'}`,
        },
      ]);
    }
    if (subGates.length === 0) {
      throw new ValidationError([
        { path: 'gateId', message: `agent gate "${gate.name}" has no sub-gates to route to` },
      ]);
    }
    role = await opts.pickRole(gate, caller, session, opts.conversation, subGates);
  }
  const chosen = subGates.find((s) => s.role === role);
  if (!chosen) {
    throw new ValidationError([
      {
        path: 'x-gatehouse-action',
        message: `agent gate "${gate.name}" has no sub-gate with role "${role}"; its roles are ${roles.join(', ') || '(none)'}`,
      },
    ]);
  }
  const visibleTools = visibleToolsOf(chosen) ?? gateVisibleTools(gate);
  return { answering: chosen.subGate, role: chosen.role, visibleTools, session };
}
