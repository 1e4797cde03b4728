/**
 * The overview's window, named in the address (`?window=24h|7d|30d`), and its charts' points:
 * the server sends only the hours or days that had requests; the charts show every one.
 */
import type { graphql } from '../graphql.ts';

export const WINDOWS = ['24h', '7d', '30d'] as const;
export type OverviewWindow = (typeof WINDOWS)[number];
export const DEFAULT_WINDOW: OverviewWindow = '24h';

export const WINDOW_LABELS: Record<OverviewWindow, string> = {
  '24h': 'Last 24 hours',
  '7d': 'Last 7 days',
  '30d': 'Last 30 days',
};

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const WINDOW_MS: Record<OverviewWindow, number> = { '24h': DAY_MS, '7d': 7 * DAY_MS, '30d': 30 * DAY_MS };

/** How the server groups the points: HOUR or DAY, as the schema spells it. */
export type Bucket = ReturnType<typeof graphql.scalar<'LogSeriesBucket'>>;

export function windowFromSearch(search: string): OverviewWindow {
  const value = new URLSearchParams(search).get('window');
  return (WINDOWS as readonly (string | null)[]).includes(value) ? (value as OverviewWindow) : DEFAULT_WINDOW;
}

/** What the overview is narrowed to, named in the address beside the window. */
export type OverviewFilters = { gateId?: string; model?: string; apiKeyId?: string; endUser?: string };
export const FILTER_PARAMS = ['gateId', 'model', 'apiKeyId', 'endUser'] as const;

export function filtersFromSearch(search: string): OverviewFilters {
  const params = new URLSearchParams(search);
  const filters: OverviewFilters = {};
  for (const name of FILTER_PARAMS) {
    const value = params.get(name)?.trim();
    if (value) filters[name] = value;
  }
  return filters;
}

/** The address's query for a window and filters (the default window and empty filters left out). */
export function windowSearch(window: OverviewWindow, filters: OverviewFilters = {}): string {
  const params = new URLSearchParams();
  if (window !== DEFAULT_WINDOW) params.set('window', window);
  for (const name of FILTER_PARAMS) {
    const value = filters[name];
    if (value) params.set(name, value);
  }
  const query = params.toString();
  return query ? `?${query}` : '';
}

/** The query's arguments: hourly points for a day, daily ones beyond. */
export function windowVariables(window: OverviewWindow, now: number) {
  const bucket: Bucket = window === '24h' ? 'HOUR' : 'DAY';
  return { since: new Date(now - WINDOW_MS[window]).toISOString(), bucket };
}

/** The start of the UTC hour or day holding `time` (the server buckets in UTC). */
export function bucketStart(time: number, bucket: Bucket): number {
  const size = bucket === 'HOUR' ? HOUR_MS : DAY_MS;
  return Math.floor(time / size) * size;
}

export type SeriesPoint = {
  start: string;
  requests: number;
  errors: number;
  costUsd: number;
  p50LatencyMs: number | null;
  p95LatencyMs: number | null;
};

export type ChartPoint = {
  /** Epoch milliseconds of the bucket's start. */
  time: number;
  requests: number;
  successes: number;
  errors: number;
  costUsd: number;
  p50LatencyMs: number | null;
  p95LatencyMs: number | null;
};

/**
 * One point per bucket from the one holding `since` to the one holding `until`, zero where the
 * server had nothing; latency stays null there (no requests, no latency) so lines break, not dip.
 */
export function fillSeries(
  points: readonly SeriesPoint[],
  since: string,
  until: string,
  bucket: Bucket,
): ChartPoint[] {
  const size = bucket === 'HOUR' ? HOUR_MS : DAY_MS;
  const byStart = new Map(points.map((point) => [bucketStart(Date.parse(point.start), bucket), point]));
  const first = bucketStart(Date.parse(since), bucket);
  const last = bucketStart(Date.parse(until) - 1, bucket);
  const filled: ChartPoint[] = [];
  for (let time = first; time <= last && filled.length < 1000; time += size) {
    const point = byStart.get(time);
    filled.push({
      time,
      requests: point?.requests ?? 0,
      successes: point ? point.requests - point.errors : 0,
      errors: point?.errors ?? 0,
      costUsd: point?.costUsd ?? 0,
      p50LatencyMs: point?.p50LatencyMs ?? null,
      p95LatencyMs: point?.p95LatencyMs ?? null,
    });
  }
  return filled;
}

const hourLabel = new Intl.DateTimeFormat('en-US', { hour: '2-digit', minute: '2-digit', hour12: false });
// Days are UTC days: label them in UTC, or a day would carry the date before it west of Greenwich.
const dayLabel = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

export function bucketLabel(time: number, bucket: Bucket): string {
  return bucket === 'HOUR' ? hourLabel.format(time) : dayLabel.format(time);
}
