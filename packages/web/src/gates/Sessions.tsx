import { SESSION_STATUSES } from '@gatehouse/rules/agent';
import { useId, useState } from 'react';
import { useQuery } from 'urql';
import { Link } from 'wouter';
import { graphql } from '../graphql.ts';
import { toEnum } from '../graphqlEnums.ts';
import { formatCount, formatDateTime, formatUsd } from '../logs/format.ts';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { TableWrap } from '../ui/TableWrap.tsx';
import { SessionStatusBadge, type SessionStatusEnum, sessionHref } from './sessionStatus.tsx';

const PAGE = 50;

const GateSessionsQuery = graphql(`
  query GateSessions($gateId: ID!, $status: SessionStatus, $first: Int) {
    sessions(gateId: $gateId, status: $status, first: $first) {
      edges {
        node {
          id
          key
          status
          topic
          spendingCurrent
          sessionSpendingLimit
          requestCount
          refusedCount
          lastRequestAt
        }
      }
      pageInfo {
        hasNextPage
      }
    }
  }
`);

/** The Sessions tab of an agent gate: its sessions, newest activity first, filtered by status. */
export function Sessions({ gateId, active }: { gateId: string; active: boolean }) {
  const [status, setStatus] = useState<'' | SessionStatusEnum>('');
  const filterId = useId();
  const [{ data, fetching, error }, refetch] = useQuery({
    query: GateSessionsQuery,
    variables: { gateId, status: status === '' ? null : status, first: PAGE },
    requestPolicy: 'cache-and-network',
    pause: !active,
  });
  const sessions = data?.sessions.edges.map((edge) => edge.node) ?? [];

  return (
    <section className="sessions">
      <div className="page-header">
        <h2>Sessions</h2>
        <div className="field inline">
          <label htmlFor={filterId}>Status</label>
          <select
            id={filterId}
            value={status}
            onChange={(event) => setStatus(event.target.value as '' | SessionStatusEnum)}
          >
            <option value="">Any</option>
            {SESSION_STATUSES.map((value) => (
              <option key={value} value={toEnum(value)}>
                {value.replace('_', ' ')}
              </option>
            ))}
          </select>
        </div>
      </div>
      {!data && fetching && <Loading what="the sessions" />}
      {error && !data && (
        <ErrorBanner error={error} onRetry={() => refetch({ requestPolicy: 'network-only' })} />
      )}
      {data && sessions.length === 0 && (
        <p className="empty-line">
          {status === ''
            ? 'No session yet: a request with an x-gatehouse-session-id header opens one.'
            : 'No session has this status.'}
        </p>
      )}
      {sessions.length > 0 && (
        <TableWrap label="Sessions">
          <table className="table" aria-label="Sessions">
            <thead>
              <tr>
                <th>Session</th>
                <th>Status</th>
                <th className="numeric">Spent</th>
                <th className="numeric">Requests</th>
                <th>Last activity</th>
              </tr>
            </thead>
            <tbody>
              {sessions.map((session) => (
                <tr key={session.id}>
                  <td data-label="Session">
                    <Link href={sessionHref(gateId, session.key)} className="mono">
                      {session.key}
                    </Link>
                    {session.topic && <div className="muted small">{session.topic}</div>}
                  </td>
                  <td data-label="Status">
                    <SessionStatusBadge status={session.status} />
                  </td>
                  <td data-label="Spent" className="numeric">
                    {formatUsd(session.spendingCurrent)}
                    {session.sessionSpendingLimit !== null &&
                      ` of ${formatUsd(session.sessionSpendingLimit)}`}
                  </td>
                  <td data-label="Requests" className="numeric">
                    {formatCount(session.requestCount + session.refusedCount)}
                    {session.refusedCount > 0 && (
                      <div className="muted small">{formatCount(session.refusedCount)} refused</div>
                    )}
                  </td>
                  <td data-label="Last activity">{formatDateTime(session.lastRequestAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {data?.sessions.pageInfo.hasNextPage && (
        <p className="muted">The {PAGE} sessions with the latest activity are shown.</p>
      )}
    </section>
  );
}
