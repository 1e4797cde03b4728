import { useCallback, useMemo, useState } from 'react';
import { useQuery } from 'urql';
import { Link, Redirect, useLocation, useSearch } from 'wouter';
import { graphql } from '../graphql.ts';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { useTitle } from '../ui/useTitle.ts';
import { formatCount, formatUsd } from './format.ts';
import { LogEntryPanel } from './LogEntryPanel.tsx';
import { LogFilterBar } from './LogFilterBar.tsx';
import { LogRowFragment, LogsTable } from './LogsTable.tsx';
import {
  exportHref,
  filterVariables,
  hasFilters,
  type LogFilters,
  type LogsState,
  logsSearch,
  logsVariables,
  nextPage,
  pageNumber,
  parseLogsSearch,
  previousPage,
  withEntry,
  withFilters,
} from './logSearch.ts';

const LogsQuery = graphql(
  `
  query Logs(
    $first: Int
    $after: String
    $gateId: ID
    $status: LogStatus
    $apiKeyId: ID
    $endUser: String
    $q: String
    $model: String
    $errorCode: String
    $failureClass: FailureClass
    $sessionId: String
    $endpoint: String
    $streamed: Boolean
    $hasToolCalls: Boolean
    $metadataKey: String
    $metadataValue: String
    $since: DateTime
    $until: DateTime
  ) {
    logs(
      first: $first
      after: $after
      gateId: $gateId
      status: $status
      apiKeyId: $apiKeyId
      endUser: $endUser
      q: $q
      model: $model
      errorCode: $errorCode
      failureClass: $failureClass
      sessionId: $sessionId
      endpoint: $endpoint
      streamed: $streamed
      hasToolCalls: $hasToolCalls
      metadataKey: $metadataKey
      metadataValue: $metadataValue
      since: $since
      until: $until
    ) {
      edges {
        node {
          id
          ...LogRow
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`,
  [LogRowFragment],
);

const LogSummaryQuery = graphql(`
  query LogSummary(
    $gateId: ID
    $status: LogStatus
    $apiKeyId: ID
    $endUser: String
    $q: String
    $model: String
    $errorCode: String
    $failureClass: FailureClass
    $sessionId: String
    $endpoint: String
    $streamed: Boolean
    $hasToolCalls: Boolean
    $metadataKey: String
    $metadataValue: String
    $since: DateTime
    $until: DateTime
  ) {
    logSummary(
      gateId: $gateId
      status: $status
      apiKeyId: $apiKeyId
      endUser: $endUser
      q: $q
      model: $model
      errorCode: $errorCode
      failureClass: $failureClass
      sessionId: $sessionId
      endpoint: $endpoint
      streamed: $streamed
      hasToolCalls: $hasToolCalls
      metadataKey: $metadataKey
      metadataValue: $metadataValue
      since: $since
      until: $until
    ) {
      count
      estimated
      costUsd
      totalTokens
    }
  }
`);

const LogGatesQuery = graphql(`
  query LogGates {
    gates(first: 100) {
      edges {
        node {
          id
          name
        }
      }
    }
    apiKeys {
      id
      name
    }
  }
`);

/** Every request, newest first: filters, pages and the open entry all live in the address. */
export function LogsPage() {
  useTitle('Logs');
  const search = useSearch();
  const [, navigate] = useLocation();
  const state = useMemo(() => parseLogsSearch(search), [search]);
  // A preset window ends "now": now is when the address last changed, or when asked to refresh.
  // Opening an entry changes the address but not the list, so "now" follows the list's part only.
  const [refreshed, setRefreshed] = useState(0);
  const listSearch = logsSearch(withEntry(state, undefined));
  // biome-ignore lint/correctness/useExhaustiveDependencies: both are there to move "now"
  const now = useMemo(() => Date.now(), [listSearch, refreshed]);
  const variables = useMemo(() => logsVariables(parseLogsSearch(listSearch), now), [listSearch, now]);
  // An empty page names no LogEntry type; this says what it lists, so a refresh can reach it.
  const context = useMemo(() => ({ additionalTypenames: ['LogEntry'] }), []);
  const [{ data, fetching, error }, refetch] = useQuery({ query: LogsQuery, variables, context });
  const summaryVariables = useMemo(
    () => filterVariables(parseLogsSearch(listSearch).filters, now),
    [listSearch, now],
  );
  const [summaryResult, refetchSummary] = useQuery({
    query: LogSummaryQuery,
    variables: summaryVariables,
    context,
  });
  const [gatesResult] = useQuery({ query: LogGatesQuery });

  const go = useCallback((next: LogsState) => navigate(`/logs${logsSearch(next)}`), [navigate]);
  const onFilters = (filters: LogFilters) => go(withFilters(state, filters));
  const closeEntry = useCallback(() => go(withEntry(state, undefined)), [go, state]);
  const refresh = () => {
    setRefreshed((n) => n + 1);
    refetch({ requestPolicy: 'network-only' });
    refetchSummary({ requestPolicy: 'network-only' });
  };

  const connection = data?.logs;
  const gates = gatesResult.data?.gates.edges.map(({ node }) => node) ?? [];
  const apiKeys = gatesResult.data?.apiKeys ?? [];
  const page = pageNumber(state);
  const entryHref = (id: string) => `/logs${logsSearch(withEntry(state, id))}`;

  return (
    <div className={state.entry ? 'logs-layout with-entry' : 'logs-layout'}>
      <section className="page logs-page">
        <div className="page-header">
          <div>
            <h1>Logs</h1>
            <p className="muted">Every request through your gates, newest first.</p>
          </div>
          <button type="button" className="button" onClick={refresh} disabled={fetching}>
            Refresh
          </button>
        </div>

        <LogFilterBar
          filters={state.filters}
          gates={gates}
          apiKeys={apiKeys}
          onChange={onFilters}
          onOpenEntry={(id) => go(withEntry(state, id))}
        />

        <div className="log-summary">
          <LogSummaryLine summary={summaryResult.data?.logSummary} fetching={summaryResult.fetching} />
          <div className="exports">
            <span className="muted small">Export these requests:</span>
            <a className="button subtle" href={exportHref(state.filters, 'csv', now)} download>
              CSV
            </a>
            <a className="button subtle" href={exportHref(state.filters, 'jsonl', now)} download>
              JSON Lines
            </a>
          </div>
        </div>

        {error && <ErrorBanner error={error} onRetry={refresh} />}
        {!connection && fetching && <Loading what="the log" />}
        {connection && connection.edges.length === 0 && page === 1 && (
          <EmptyLog filtered={hasFilters(state.filters)} onClearFilters={() => onFilters({})} />
        )}
        {connection && (connection.edges.length > 0 || page > 1) && (
          <>
            <LogsTable
              entries={connection.edges.map(({ node }) => node)}
              entryHref={entryHref}
              selectedId={state.entry}
              caption="Log entries"
              busy={fetching}
            />
            <LogPager
              page={page}
              empty={connection.edges.length === 0}
              onPrevious={() => go(previousPage(state))}
              next={connection.pageInfo.hasNextPage ? connection.pageInfo.endCursor : null}
              onNext={(cursor) => go(nextPage(state, cursor))}
            />
          </>
        )}
      </section>
      {/* Keyed by the entry, so another entry opens at its top. */}
      {state.entry && <LogEntryPanel key={state.entry} id={state.entry} onClose={closeEntry} />}
    </div>
  );
}

/** "1,234 requests · $12.34 · 456k tokens", "about 200,000 requests …" past the exact count. */
export function summaryText(s: { count: number; estimated: boolean; costUsd: number; totalTokens: number }) {
  const about = s.estimated ? 'about ' : '';
  const tokens =
    s.totalTokens >= 10_000
      ? `${formatCount(Math.round(s.totalTokens / 1000))}k`
      : formatCount(s.totalTokens);
  return `${about}${formatCount(s.count)} ${s.count === 1 ? 'request' : 'requests'} · ${about}${formatUsd(
    s.costUsd,
  )} · ${about}${tokens} tokens`;
}

function LogSummaryLine({
  summary,
  fetching,
}: {
  summary: { count: number; estimated: boolean; costUsd: number; totalTokens: number } | undefined;
  fetching: boolean;
}) {
  return (
    <p className="summary-line" aria-live="polite" aria-busy={fetching}>
      {summary ? (
        <>
          <strong>{summaryText(summary)}</strong>
          {summary.estimated && <span className="muted small"> (estimated: more than 10,000 match)</span>}
        </>
      ) : (
        <span className="muted">Counting…</span>
      )}
    </p>
  );
}

/** What an empty first page says: nothing matches the filters, or nothing was logged yet. */
function EmptyLog({ filtered, onClearFilters }: { filtered: boolean; onClearFilters: () => void }) {
  return (
    <div className="empty">
      {filtered ? (
        <>
          <h2>No requests match these filters</h2>
          <button type="button" className="button" onClick={onClearFilters}>
            Clear filters
          </button>
        </>
      ) : (
        <>
          <h2>No requests yet</h2>
          <p className="muted">
            Requests appear here as soon as an application calls a gate. <Link href="/">The overview</Link>{' '}
            shows how to send one.
          </p>
        </>
      )}
    </div>
  );
}

/** Previous and Next around the page number; `next` is the cursor of the next page, if there is one. */
function LogPager({
  page,
  empty,
  onPrevious,
  next,
  onNext,
}: {
  page: number;
  empty: boolean;
  onPrevious: () => void;
  next: string | null | undefined;
  onNext: (cursor: string) => void;
}) {
  return (
    <nav className="pager" aria-label="Pages of the log">
      <button type="button" className="button" disabled={page === 1} onClick={onPrevious}>
        ← Previous
      </button>
      <span className="muted small">
        Page {page}
        {empty && ' · nothing here'}
      </span>
      <button type="button" className="button" disabled={!next} onClick={() => next && onNext(next)}>
        Next →
      </button>
    </nav>
  );
}

/** `/logs/<id>`: the same entry, opened over the unfiltered log. */
export function LogEntryRedirect({ params }: { params: { id: string } }) {
  return <Redirect to={`/logs${logsSearch(withEntry({ filters: {}, back: [] }, params.id))}`} replace />;
}
