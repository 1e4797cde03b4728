/**
 * Sub-gates (issue 13): an agent gate delegates a role (a step of its work) to another gate of the
 * same owner, of any task type and either gate type, never itself and never in a cycle. Deleting
 * either gate removes the attachment in the same statement (ON DELETE CASCADE).
 */
import { parseSubGateInput } from '@gatehouse/rules/agent';
import { isUuid } from '@gatehouse/rules/ids';
import { prisma } from '../db/client.ts';
import { transaction } from '../db/transaction.ts';
import { type Gate, Prisma, type SubGate } from '../generated/prisma/client.ts';
import { NotFoundError, ValidationError } from './errors.ts';
import { getGate } from './gateCache.ts';

export type SubGateWithGate = SubGate & { subGate: Gate };
export type SubGateWithAgent = SubGate & { agentGate: Gate };

const ORDER = [
  { createdAt: 'asc' },
  { role: 'asc' },
] as const satisfies Prisma.SubGateOrderByWithRelationInput[];

/** The sub-gates of the caller's agent gate, in the order they were attached. */
export async function listSubGates(userId: string, agentGateId: string): Promise<SubGateWithGate[]> {
  const gate = await getGate(userId, agentGateId);
  return prisma.subGate.findMany({
    where: { agentGateId: gate.id },
    include: { subGate: true },
    orderBy: ORDER,
  });
}

/** The agent gates that use the caller's gate, each with the role it plays there. */
export async function gateConnections(userId: string, gateId: string): Promise<SubGateWithAgent[]> {
  const gate = await getGate(userId, gateId);
  return prisma.subGate.findMany({
    where: { subGateId: gate.id, agentGate: { userId } },
    include: { agentGate: true },
    orderBy: ORDER,
  });
}

/** Whether `target` is reachable from `from` through sub_gates (so attaching `from` under `target` loops). */
async function reaches(tx: Prisma.TransactionClient, from: string, target: string): Promise<boolean> {
  const rows = await tx.$queryRaw<{ found: number }[]>`
    WITH RECURSIVE reach(id) AS (
      SELECT sub_gate_id FROM sub_gates WHERE agent_gate_id = ${from}::uuid
      UNION
      SELECT s.sub_gate_id FROM sub_gates s JOIN reach r ON s.agent_gate_id = r.id
    )
    SELECT 1 AS found FROM reach WHERE id = ${target}::uuid LIMIT 1`;
  return rows.length > 0;
}

/**
 * Attaches one of the caller's gates to their agent gate under a role. Refused (400, naming the
 * field): a standard agent gate, a sub-gate that is missing or another user's (the same words for
 * both, so the answer tells nothing of other accounts), the gate itself, a cycle, a role taken,
 * a gate attached already. Another user's agent gate is a 404.
 */
export async function attachSubGate(
  userId: string,
  agentGateId: string,
  raw: unknown,
): Promise<SubGateWithGate> {
  await getGate(userId, agentGateId);
  const parsed = parseSubGateInput(raw);
  if (!parsed.ok) throw new ValidationError(parsed.issues);
  const input = parsed.value;
  try {
    return await transaction(async (tx) => {
      // Serializes the owner's attachments, so two concurrent ones cannot close a cycle together.
      await tx.$queryRaw`SELECT 1 FROM users WHERE id = ${userId}::uuid FOR UPDATE`;
      const agent = await tx.gate.findFirst({ where: { id: agentGateId, userId } });
      if (!agent) throw new NotFoundError('Gate');
      if (agent.gateType !== 'agent') {
        throw new ValidationError([
          {
            path: 'gateId',
            message: 'is a standard gate; only an agent gate (gateType agent) has sub-gates',
          },
        ]);
      }
      const sub = await tx.gate.findFirst({ where: { id: input.subGateId, userId } });
      if (!sub) throw new ValidationError([{ path: 'subGateId', message: 'must be one of your gates' }]);
      if (sub.id === agent.id) {
        throw new ValidationError([{ path: 'subGateId', message: 'cannot be the agent gate itself' }]);
      }
      if (await reaches(tx, sub.id, agent.id)) {
        throw new ValidationError([
          {
            path: 'subGateId',
            message: 'would make a cycle: this agent gate is already reachable from that gate',
          },
        ]);
      }
      const existing = await tx.subGate.findMany({ where: { agentGateId: agent.id } });
      const same = existing.find((s) => s.subGateId === sub.id);
      if (same) {
        throw new ValidationError([
          { path: 'subGateId', message: `is attached already, as role ${same.role}` },
        ]);
      }
      if (existing.some((s) => s.role === input.role)) {
        throw new ValidationError([
          { path: 'role', message: 'is taken by another sub-gate of this agent gate' },
        ]);
      }
      return tx.subGate.create({
        data: {
          agentGateId: agent.id,
          subGateId: sub.id,
          role: input.role,
          description: input.description ?? null,
          visibleTools: input.visibleTools == null ? Prisma.DbNull : input.visibleTools,
        },
        include: { subGate: true },
      });
    });
  } catch (error) {
    // The lock above makes this unreachable in practice; a racing duplicate still reads as a 400.
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') {
      throw new ValidationError([
        { path: 'role', message: 'is taken by another sub-gate of this agent gate' },
      ]);
    }
    throw error;
  }
}

/** Detaches a sub-gate; one not attached to the caller's agent gate is a 404. */
export async function detachSubGate(userId: string, agentGateId: string, subGateId: string): Promise<void> {
  const gate = await getGate(userId, agentGateId);
  const { count } = isUuid(subGateId)
    ? await prisma.subGate.deleteMany({ where: { agentGateId: gate.id, subGateId } })
    : { count: 0 };
  if (count === 0) throw new NotFoundError('Sub-gate');
}

/**
 * The sub-gate an agent gate names `role`, or null when it has none (for the data plane: a request
 * naming a role that is not attached is refused with a 400).
 */
export async function subGateByRole(agentGateId: string, role: string): Promise<SubGateWithGate | null> {
  return prisma.subGate.findUnique({
    where: { agentGateId_role: { agentGateId, role } },
    include: { subGate: true },
  });
}

/** A sub-gate's visible tools as stored: null is every tool. */
export const visibleToolsOf = (row: Pick<SubGate, 'visibleTools'>) => row.visibleTools as string[] | null;
