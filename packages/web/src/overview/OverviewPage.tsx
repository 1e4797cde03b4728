import { lazy, Suspense, useMemo, useState } from 'react';
import { useQuery } from 'urql';
import { Link, useLocation, useSearch } from 'wouter';
import { graphql, type ResultOf } from '../graphql.ts';
import { formatCount, formatMs, formatUsd } from '../logs/format.ts';
import { LogRowFragment, LogsTable } from '../logs/LogsTable.tsx';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { useTitle } from '../ui/useTitle.ts';
import {
  fillSeries,
  type OverviewWindow,
  WINDOW_LABELS,
  WINDOWS,
  windowFromSearch,
  windowSearch,
  windowVariables,
} from './overviewWindow.ts';
import { SendFirstRequest } from './SendFirstRequest.tsx';
import { SpendingBreakdownFragment, SpendingPanels } from './SpendingBreakdown.tsx';

// The chart library is most of the bundle: it loads with the overview, not before sign-in.
const OverviewCharts = lazy(() =>
  import('./OverviewCharts.tsx').then((m) => ({ default: m.OverviewCharts })),
);

const OverviewQuery = graphql(
  `
  query Overview($since: DateTime!, $until: DateTime!, $bucket: LogSeriesBucket!) {
    overview(since: $since, until: $until) {
      totalRequests
      failedRequests
      totalCostUsd
      avgLatencyMs
      activeGates
      recentRequests {
        id
        ...LogRow
      }
      spendingByKey {
        ...SpendingBreakdown
      }
      spendingByEndUser {
        ...SpendingBreakdown
      }
    }
    logSeries(since: $since, until: $until, bucket: $bucket) {
      bucket
      since
      until
      points {
        start
        requests
        errors
        costUsd
        p50LatencyMs
        p95LatencyMs
      }
    }
    anyRequest: logs(first: 1) {
      edges {
        node {
          id
        }
      }
    }
    gates(first: 1) {
      edges {
        node {
          id
          name
        }
      }
    }
  }
`,
  [LogRowFragment, SpendingBreakdownFragment],
);

type Overview = ResultOf<typeof OverviewQuery>['overview'];

/** The landing page: totals, charts and the latest requests over the window the address names. */
export function OverviewPage() {
  useTitle('Overview');
  const search = useSearch();
  const [, navigate] = useLocation();
  const timeWindow = windowFromSearch(search);
  const [refreshed, setRefreshed] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `refreshed` is there to move "now"
  const variables = useMemo(() => {
    const now = Date.now();
    return { ...windowVariables(timeWindow, now), until: new Date(now).toISOString() };
  }, [timeWindow, refreshed]);
  const context = useMemo(() => ({ additionalTypenames: ['LogEntry'] }), []);
  const [{ data, fetching, error }, refetch] = useQuery({ query: OverviewQuery, variables, context });
  const refresh = () => {
    setRefreshed((n) => n + 1);
    refetch({ requestPolicy: 'network-only' });
  };

  const series = data?.logSeries;
  const points = useMemo(
    () => (series ? fillSeries(series.points, series.since, series.until, series.bucket) : []),
    [series],
  );
  const overview = data?.overview;
  const neverUsed = data && data.anyRequest.edges.length === 0;

  return (
    <section className="page overview">
      <div className="page-header">
        <div>
          <h1>Overview</h1>
          <p className="muted">Requests, failures, spending and latency across your gates.</p>
        </div>
        <div className="page-actions">
          <WindowPicker current={timeWindow} onPick={(option) => navigate(`/${windowSearch(option)}`)} />
          <button type="button" className="button" onClick={refresh} disabled={fetching}>
            Refresh
          </button>
        </div>
      </div>

      {error && <ErrorBanner error={error} onRetry={refresh} />}
      {!data && fetching && <Loading what="the overview" />}
      {neverUsed && <SendFirstRequest gate={data.gates.edges[0]?.node} />}
      {overview && !neverUsed && (
        <>
          <Totals overview={overview} timeWindow={timeWindow} />
          {overview.totalRequests === 0 && (
            <p className="banner info">
              No requests in the {WINDOW_LABELS[timeWindow].toLowerCase()}. Choose a longer window, or see all
              of them in <Link href="/logs">the logs</Link>.
            </p>
          )}
          {series && (
            <Suspense fallback={<Loading what="the charts" />}>
              <OverviewCharts points={points} bucket={series.bucket} />
            </Suspense>
          )}
          <SpendingPanels
            byKey={overview.spendingByKey}
            byEndUser={overview.spendingByEndUser}
            timeWindow={timeWindow}
          />
          <div className="section-header">
            <h2>Recent requests</h2>
            <Link href="/logs">All logs →</Link>
          </div>
          {overview.recentRequests.length > 0 ? (
            <LogsTable
              entries={overview.recentRequests}
              entryHref={(id) => `/logs?entry=${id}`}
              caption="Recent requests"
              busy={fetching}
            />
          ) : (
            <p className="muted">None in this window.</p>
          )}
        </>
      )}
    </section>
  );
}

/** The buttons that choose the window the page covers. */
function WindowPicker({
  current,
  onPick,
}: {
  current: OverviewWindow;
  onPick: (option: OverviewWindow) => void;
}) {
  return (
    <fieldset className="segmented">
      <legend className="sr-only">Time window</legend>
      {WINDOWS.map((option) => (
        <button
          key={option}
          type="button"
          className={option === current ? 'active' : ''}
          aria-pressed={option === current}
          onClick={() => onPick(option)}
        >
          {WINDOW_LABELS[option]}
        </button>
      ))}
    </fieldset>
  );
}

/** Requests, failures, cost, average latency and active gates over the window. */
function Totals({ overview, timeWindow }: { overview: Overview; timeWindow: OverviewWindow }) {
  return (
    <dl className="totals" aria-label={`Totals, ${WINDOW_LABELS[timeWindow].toLowerCase()}`}>
      <Total term="Requests" value={formatCount(overview.totalRequests)} />
      <Total
        term="Failed"
        value={formatCount(overview.failedRequests)}
        note={
          overview.totalRequests > 0
            ? `${((overview.failedRequests / overview.totalRequests) * 100).toFixed(1)}% of requests`
            : undefined
        }
        danger={overview.failedRequests > 0}
      />
      <Total term="Cost" value={formatUsd(overview.totalCostUsd)} />
      <Total term="Avg latency" value={overview.totalRequests > 0 ? formatMs(overview.avgLatencyMs) : '—'} />
      <Total term="Active gates" value={formatCount(overview.activeGates)} />
    </dl>
  );
}

function Total({
  term,
  value,
  note,
  danger = false,
}: {
  term: string;
  value: string;
  note?: string | undefined;
  danger?: boolean;
}) {
  return (
    <div className={danger ? 'total danger' : 'total'}>
      <dt>{term}</dt>
      <dd>
        <span className="total-value">{value}</span>
        {note && <span className="muted small">{note}</span>}
      </dd>
    </div>
  );
}
