import { lazy, Suspense, useEffect, useMemo, useState } from 'react';
import { useQuery } from 'urql';
import { Link, useLocation, useSearch } from 'wouter';
import { graphql, type ResultOf } from '../graphql.ts';
import { formatCount, formatMs, formatUsd } from '../logs/format.ts';
import { LogRowFragment, LogsTable } from '../logs/LogsTable.tsx';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { useTitle } from '../ui/useTitle.ts';
import {
  fillSeries,
  filtersFromSearch,
  type OverviewFilters,
  type OverviewWindow,
  WINDOW_LABELS,
  WINDOWS,
  windowFromSearch,
  windowSearch,
  windowVariables,
} from './overviewWindow.ts';
import { SendFirstRequest } from './SendFirstRequest.tsx';
import { SpendingBreakdownFragment, SpendingPanels } from './SpendingBreakdown.tsx';

// The chart library is most of the bundle: its own chunk, loaded by the overview only. The page
// asks for it as it opens, beside its query, so the charts need not wait for the figures first.
const chartsChunk = () => import('./OverviewCharts.tsx');
const OverviewCharts = lazy(() => chartsChunk().then((m) => ({ default: m.OverviewCharts })));

const OverviewQuery = graphql(
  `
  query Overview(
    $since: DateTime!
    $until: DateTime!
    $bucket: LogSeriesBucket!
    $gateId: ID
    $model: String
    $apiKeyId: ID
    $endUser: String
  ) {
    overview(
      since: $since
      until: $until
      gateId: $gateId
      model: $model
      apiKeyId: $apiKeyId
      endUser: $endUser
    ) {
      totalRequests
      failedRequests
      failuresByClass {
        providerError
        limitRefusal
        rateLimit
        clientError
      }
      totalCostUsd
      avgLatencyMs
      p50LatencyMs
      p95LatencyMs
      activeGates
      recentRequests {
        id
        ...LogRow
      }
      byGate {
        ...SpendingBreakdown
      }
      byModel {
        ...SpendingBreakdown
      }
      spendingByKey {
        ...SpendingBreakdown
      }
      spendingByEndUser {
        ...SpendingBreakdown
      }
    }
    logSeries(
      since: $since
      until: $until
      bucket: $bucket
      gateId: $gateId
      model: $model
      apiKeyId: $apiKeyId
      endUser: $endUser
    ) {
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
`,
  [LogRowFragment, SpendingBreakdownFragment],
);

type Overview = ResultOf<typeof OverviewQuery>['overview'];

/** The landing page: totals, charts and the latest requests over the window the address names. */
export function OverviewPage() {
  useTitle('Overview');
  useEffect(() => {
    chartsChunk().catch(() => {}); // a failed load is retried, and shown, by the lazy component
  }, []);
  const search = useSearch();
  const [, navigate] = useLocation();
  const timeWindow = windowFromSearch(search);
  const filters = useMemo(() => filtersFromSearch(search), [search]);
  const [refreshed, setRefreshed] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `refreshed` is there to move "now"
  const variables = useMemo(() => {
    const now = Date.now();
    return {
      ...windowVariables(timeWindow, now),
      until: new Date(now).toISOString(),
      gateId: filters.gateId ?? null,
      model: filters.model ?? null,
      apiKeyId: filters.apiKeyId ?? null,
      endUser: filters.endUser ?? null,
    };
  }, [timeWindow, filters, refreshed]);
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
          <WindowPicker
            current={timeWindow}
            onPick={(option) => navigate(`/${windowSearch(option, filters)}`)}
          />
          <button type="button" className="button" onClick={refresh} disabled={fetching}>
            Refresh
          </button>
        </div>
      </div>

      {data && !neverUsed && (
        <OverviewFilterForm
          key={search}
          filters={filters}
          gates={data.gates.edges.map((edge) => edge.node)}
          apiKeys={data.apiKeys}
          onApply={(next) => navigate(`/${windowSearch(timeWindow, next)}`)}
        />
      )}
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
            byGate={overview.byGate}
            byModel={overview.byModel}
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

/** Why requests failed, as the overview splits them. */
const FAILURE_CLASS_LABELS = [
  ['providerError', 'Provider errors'],
  ['limitRefusal', 'Limit refusals'],
  ['rateLimit', 'Rate limited'],
  ['clientError', 'Client errors'],
] as const;

/** Requests, failures (split by class), cost, latency and active gates over the window. */
function Totals({ overview, timeWindow }: { overview: Overview; timeWindow: OverviewWindow }) {
  const anyRequest = overview.totalRequests > 0;
  return (
    <>
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
        <Total term="Avg latency" value={anyRequest ? formatMs(overview.avgLatencyMs) : '—'} />
        <Total
          term="p50 / p95 latency"
          value={
            overview.p50LatencyMs !== null && overview.p95LatencyMs !== null
              ? `${formatMs(overview.p50LatencyMs)} / ${formatMs(overview.p95LatencyMs)}`
              : '—'
          }
        />
        <Total term="Active gates" value={formatCount(overview.activeGates)} />
      </dl>
      {overview.failedRequests > 0 && (
        <dl className="failure-classes" aria-label="Failed requests by class">
          {FAILURE_CLASS_LABELS.map(([field, label]) => (
            <div key={field} className="failure-class">
              <dt>{label}</dt>
              <dd>{formatCount(overview.failuresByClass[field])}</dd>
            </div>
          ))}
        </dl>
      )}
    </>
  );
}

/** The overview's filters: a gate, a model, an API key, an end user; applied to the address. */
function OverviewFilterForm({
  filters,
  gates,
  apiKeys,
  onApply,
}: {
  filters: OverviewFilters;
  gates: readonly { id: string; name: string }[];
  apiKeys: readonly { id: string; name: string }[];
  onApply: (filters: OverviewFilters) => void;
}) {
  const [draft, setDraft] = useState<OverviewFilters>(filters);
  const set = (name: keyof OverviewFilters) => (event: { target: { value: string } }) =>
    setDraft((d) => ({ ...d, [name]: event.target.value }));
  const active = Object.values(filters).some(Boolean);
  return (
    <form
      className="filters"
      aria-label="Overview filters"
      onSubmit={(event) => {
        event.preventDefault();
        onApply(draft);
      }}
    >
      <label className="field">
        <span>Gate</span>
        <select value={draft.gateId ?? ''} onChange={set('gateId')}>
          <option value="">All gates</option>
          {gates.map((gate) => (
            <option key={gate.id} value={gate.id}>
              {gate.name}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        <span>Model</span>
        <input type="text" value={draft.model ?? ''} onChange={set('model')} placeholder="Any model" />
      </label>
      <label className="field">
        <span>API key</span>
        <select value={draft.apiKeyId ?? ''} onChange={set('apiKeyId')}>
          <option value="">All keys</option>
          {apiKeys.map((key) => (
            <option key={key.id} value={key.id}>
              {key.name}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        <span>End user</span>
        <input type="text" value={draft.endUser ?? ''} onChange={set('endUser')} placeholder="Any end user" />
      </label>
      <div className="filter-actions">
        <button type="submit" className="button">
          Apply
        </button>
        {active && (
          <button type="button" className="button" onClick={() => onApply({})}>
            Clear filters
          </button>
        )}
      </div>
    </form>
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
