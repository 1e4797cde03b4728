/**
 * Gates' figures over the last 24 hours: requests, errors, cost and p50/p95 latency, read for a
 * whole list of gates in one query (the gates list), or for one (its page's stats strip).
 */
import { useMemo } from 'react';
import { useQuery } from 'urql';
import { Link } from 'wouter';
import { graphql, type ResultOf } from '../graphql.ts';
import { formatCount, formatMs, formatUsd } from '../logs/format.ts';

const DAY_MS = 86_400_000;

export const GateStatsQuery = graphql(`
  query GateStats($gateIds: [ID!], $since: DateTime) {
    gateStats(gateIds: $gateIds, since: $since) {
      gateId
      requests
      errors
      costUsd
      p50LatencyMs
      p95LatencyMs
    }
  }
`);

export type GateFigures = ResultOf<typeof GateStatsQuery>['gateStats'][number];

/** The figures of these gates over the last 24 hours, by gate id (a gate with none is absent). */
export function useGateStats(gateIds: readonly string[]) {
  const key = gateIds.join(',');
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` stands for the ids
  const variables = useMemo(
    () => ({ gateIds: [...gateIds], since: new Date(Date.now() - DAY_MS).toISOString() }),
    [key],
  );
  const context = useMemo(() => ({ additionalTypenames: ['LogEntry'] }), []);
  const [{ data, fetching, error }] = useQuery({
    query: GateStatsQuery,
    variables,
    context,
    pause: gateIds.length === 0,
    requestPolicy: 'cache-and-network',
  });
  const byGate = useMemo(() => new Map((data?.gateStats ?? []).map((s) => [s.gateId, s])), [data]);
  return { byGate, loaded: data !== undefined, fetching, error };
}

export const latencyText = (s: Pick<GateFigures, 'p50LatencyMs' | 'p95LatencyMs'> | undefined) =>
  s && s.p50LatencyMs !== null && s.p95LatencyMs !== null
    ? `${formatMs(s.p50LatencyMs)} / ${formatMs(s.p95LatencyMs)}`
    : '—';

/** One gate's strip: its figures over the last 24 hours and a link to its logs. */
export function GateStatsStrip({ gateId }: { gateId: string }) {
  const { byGate, loaded, error } = useGateStats([gateId]);
  const stats = byGate.get(gateId);
  return (
    <section className="gate-stats" aria-label="Last 24 hours">
      <strong>Last 24 hours</strong>
      {error ? (
        <span className="muted">The figures could not be loaded.</span>
      ) : !loaded ? (
        <span className="muted" role="status">
          Loading the figures…
        </span>
      ) : (
        <dl>
          <div className="gate-stat">
            <dt>Requests</dt>
            <dd>{formatCount(stats?.requests ?? 0)}</dd>
          </div>
          <div className="gate-stat">
            <dt>Errors</dt>
            <dd>{formatCount(stats?.errors ?? 0)}</dd>
          </div>
          <div className="gate-stat">
            <dt>Cost</dt>
            <dd>{formatUsd(stats?.costUsd ?? 0)}</dd>
          </div>
          <div className="gate-stat">
            <dt>p50 / p95</dt>
            <dd>{latencyText(stats)}</dd>
          </div>
        </dl>
      )}
      <Link href={`/logs?${new URLSearchParams({ gateId })}`}>Its logs →</Link>
    </section>
  );
}
