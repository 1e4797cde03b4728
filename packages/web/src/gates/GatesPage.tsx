import { ROUTING_STRATEGIES, TASK_TYPES } from '@gatehouse/rules/gate';
import { useMemo } from 'react';
import { useQuery } from 'urql';
import { Link, useSearch } from 'wouter';
import { graphql, type ResultOf } from '../graphql.ts';
import { fromEnum } from '../graphqlEnums.ts';
import { formatCount, formatUsd } from '../logs/format.ts';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { TableWrap } from '../ui/TableWrap.tsx';
import { useTitle } from '../ui/useTitle.ts';
import { type GateFigures, latencyText, useGateStats } from './GateStats.tsx';
import { SpendingCell } from './SpendingNotice.tsx';

const PAGE_SIZE = 25;

const GatesQuery = graphql(`
  query Gates($first: Int, $after: String, $last: Int, $before: String) {
    gates(first: $first, after: $after, last: $last, before: $before) {
      edges {
        node {
          id
          name
          gateType
          taskType
          model
          fallbackModels
          routingStrategy
          spendingStatus
          spendingCurrent
          spendingLimit
          spendingLimitPeriod
          spendingEnforcement
          spendingPeriodStart
          spendingResetsAt
          tags
        }
      }
      pageInfo {
        hasNextPage
        hasPreviousPage
        startCursor
        endCursor
      }
    }
  }
`);

type GateRow = ResultOf<typeof GatesQuery>['gates']['edges'][number]['node'];

/** The page of gates the URL names: `?after=<cursor>` forward, `?before=<cursor>` back. */
function pageFromSearch(search: string) {
  const params = new URLSearchParams(search);
  const before = params.get('before');
  if (before) return { last: PAGE_SIZE, before };
  const after = params.get('after');
  return { first: PAGE_SIZE, ...(after && { after }) };
}

export function GatesPage() {
  useTitle('Gates');
  const search = useSearch();
  const variables = useMemo(() => pageFromSearch(search), [search]);
  // An empty list names no Gate type, so say it: creating a gate must refresh this list.
  const context = useMemo(() => ({ additionalTypenames: ['Gate'] }), []);
  // Spending and gates made through the API change without this page knowing: ask each time it opens.
  const [{ data, fetching, error }, refetch] = useQuery({
    query: GatesQuery,
    variables,
    context,
    requestPolicy: 'cache-and-network',
  });

  const connection = data?.gates;
  // The page's figures in one query beside the list, not one per gate.
  const ids = useMemo(() => connection?.edges.map(({ node }) => node.id) ?? [], [connection]);
  const stats = useGateStats(ids);
  const firstPage = !('after' in variables) && !('before' in variables);

  return (
    <section className="page">
      <div className="page-header">
        <div>
          <h1>Gates</h1>
          <p className="muted">Each gate is a stored configuration your applications call by its id.</p>
        </div>
        <Link href="/gates/new" className="button primary">
          Create gate
        </Link>
      </div>

      {error && <ErrorBanner error={error} onRetry={() => refetch({ requestPolicy: 'network-only' })} />}
      {!connection && fetching && <Loading what="gates" />}
      {connection && connection.edges.length === 0 && firstPage && (
        <div className="empty">
          <h2>No gates yet</h2>
          <p className="muted">Create a gate to choose a model, its parameters and a spending limit.</p>
          <Link href="/gates/new" className="button primary">
            Create your first gate
          </Link>
        </div>
      )}
      {connection && (connection.edges.length > 0 || !firstPage) && (
        <>
          <TableWrap label="Gates">
            <table className="table">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Task type</th>
                  <th>Model</th>
                  <th>Routing</th>
                  <th>Spending</th>
                  <th className="numeric">
                    Requests <span className="muted small">24 h</span>
                  </th>
                  <th className="numeric">Errors</th>
                  <th className="numeric">Cost</th>
                  <th className="numeric">p50 / p95</th>
                  <th>Tags</th>
                </tr>
              </thead>
              <tbody>
                {connection.edges.map(({ node }) => (
                  <GateTableRow
                    key={node.id}
                    gate={node}
                    stats={stats.loaded ? (stats.byGate.get(node.id) ?? null) : undefined}
                  />
                ))}
              </tbody>
            </table>
          </TableWrap>
          <nav className="pager" aria-label="Pages of gates">
            {connection.pageInfo.hasPreviousPage && connection.pageInfo.startCursor ? (
              <Link href={`/gates?before=${encodeURIComponent(connection.pageInfo.startCursor)}`}>
                ← Newer
              </Link>
            ) : (
              <span />
            )}
            {connection.pageInfo.hasNextPage && connection.pageInfo.endCursor && (
              <Link href={`/gates?after=${encodeURIComponent(connection.pageInfo.endCursor)}`}>Older →</Link>
            )}
          </nav>
        </>
      )}
    </section>
  );
}

/** `stats`: the gate's figures, null when it had no traffic, undefined while they load. */
function GateTableRow({ gate, stats }: { gate: GateRow; stats: GateFigures | null | undefined }) {
  const figure = (value: (s: GateFigures) => string, none: string) =>
    stats === undefined ? <span className="muted">…</span> : stats === null ? none : value(stats);
  return (
    <tr>
      <td data-label="Name">
        <Link href={`/gates/${gate.id}`} className="strong">
          {gate.name}
        </Link>
        {gate.gateType === 'AGENT' && (
          <>
            {' '}
            <span className="badge info">agent</span>
          </>
        )}
        <div className="mono muted small" title="The gate id applications send">
          {gate.id}
        </div>
      </td>
      <td data-label="Task type">{fromEnum(TASK_TYPES, gate.taskType)}</td>
      <td data-label="Model">
        <div className="mono">{gate.model}</div>
        {gate.fallbackModels.length > 0 && (
          <div className="muted small">
            + {gate.fallbackModels.length} fallback{gate.fallbackModels.length === 1 ? '' : 's'}
          </div>
        )}
      </td>
      <td data-label="Routing">{fromEnum(ROUTING_STRATEGIES, gate.routingStrategy)}</td>
      <td data-label="Spending">
        <SpendingCell gate={gate} />
      </td>
      <td data-label="Requests" className="numeric">
        {stats ? (
          <Link href={`/logs?${new URLSearchParams({ gateId: gate.id, range: '24h' })}`}>
            {formatCount(stats.requests)}
          </Link>
        ) : (
          figure(() => '', '0')
        )}
      </td>
      <td data-label="Errors" className="numeric">
        {figure((s) => formatCount(s.errors), '0')}
      </td>
      <td data-label="Cost" className="numeric">
        {figure((s) => formatUsd(s.costUsd), '$0.00')}
      </td>
      <td data-label="p50 / p95" className="numeric">
        {figure((s) => latencyText(s), '—')}
      </td>
      <td data-label="Tags">
        <div className="tags">
          {gate.tags.map((tag) => (
            <span key={tag} className="tag">
              {tag}
            </span>
          ))}
        </div>
      </td>
    </tr>
  );
}
