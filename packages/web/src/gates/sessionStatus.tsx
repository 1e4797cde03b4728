import { SESSION_STATUSES } from '@gatehouse/rules/agent';
import { fromEnum } from '../graphqlEnums.ts';

export type SessionStatusEnum = 'ACTIVE' | 'IDLE' | 'FAILING' | 'COMPLETED' | 'RUNAWAY' | 'BUDGET_EXCEEDED';

const BADGE: Record<SessionStatusEnum, string> = {
  ACTIVE: 'ok',
  IDLE: 'neutral',
  FAILING: 'danger',
  COMPLETED: 'info',
  RUNAWAY: 'danger',
  BUDGET_EXCEEDED: 'warning',
};

/** A session's status as a badge: "budget exceeded", "runaway". */
export function SessionStatusBadge({ status }: { status: SessionStatusEnum }) {
  return (
    <span className={`badge ${BADGE[status]}`}>{fromEnum(SESSION_STATUSES, status).replace('_', ' ')}</span>
  );
}

/** Whether End session can do anything: the server refuses a completed session or one over budget. */
export const canEnd = (status: SessionStatusEnum) => status !== 'COMPLETED' && status !== 'BUDGET_EXCEEDED';

/** The link to a session's page; the key is any printable text, so it travels as a query value. */
export const sessionHref = (gateId: string, key: string) =>
  `/gates/${gateId}/session?${new URLSearchParams({ key })}`;
