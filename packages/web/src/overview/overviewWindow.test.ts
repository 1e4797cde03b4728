import { describe, expect, it } from 'vitest';
import { fillSeries, windowFromSearch, windowSearch, windowVariables } from './overviewWindow.ts';

describe('the overview window in the address', () => {
  it('reads 24h, 7d and 30d, and falls back to the last 24 hours', () => {
    expect(windowFromSearch('?window=7d')).toBe('7d');
    expect(windowFromSearch('?window=30d')).toBe('30d');
    expect(windowFromSearch('')).toBe('24h');
    expect(windowFromSearch('?window=1y')).toBe('24h');
  });

  it('writes the default as no query at all', () => {
    expect(windowSearch('24h')).toBe('');
    expect(windowSearch('30d')).toBe('?window=30d');
  });

  it('asks for hours over a day and days beyond', () => {
    const now = Date.parse('2026-11-21T12:30:00.000Z');
    expect(windowVariables('24h', now)).toEqual({ since: '2026-11-20T12:30:00.000Z', bucket: 'HOUR' });
    expect(windowVariables('7d', now)).toEqual({ since: '2026-11-14T12:30:00.000Z', bucket: 'DAY' });
  });
});

describe('the chart points', () => {
  const point = (start: string, requests: number, errors: number) => ({
    start,
    requests,
    errors,
    costUsd: requests * 0.001,
    p50LatencyMs: 100,
    p95LatencyMs: 250,
  });

  it('has every hour of the window, zero where nothing was asked', () => {
    const filled = fillSeries(
      [point('2026-11-21T10:00:00.000Z', 4, 1)],
      '2026-11-21T08:30:00.000Z',
      '2026-11-21T11:15:00.000Z',
      'HOUR',
    );
    expect(filled.map((p) => new Date(p.time).toISOString())).toEqual([
      '2026-11-21T08:00:00.000Z',
      '2026-11-21T09:00:00.000Z',
      '2026-11-21T10:00:00.000Z',
      '2026-11-21T11:00:00.000Z',
    ]);
    expect(filled[1]).toMatchObject({ requests: 0, errors: 0, costUsd: 0, p50LatencyMs: null });
    expect(filled[2]).toEqual({
      time: Date.parse('2026-11-21T10:00:00.000Z'),
      requests: 4,
      successes: 3,
      errors: 1,
      costUsd: 0.004,
      p50LatencyMs: 100,
      p95LatencyMs: 250,
    });
  });

  it('has every UTC day of the window, and no bucket after its end', () => {
    const filled = fillSeries(
      [point('2026-11-19T00:00:00.000Z', 2, 0), point('2026-11-21T00:00:00.000Z', 1, 1)],
      '2026-11-18T12:00:00.000Z',
      '2026-11-21T00:00:00.000Z',
      'DAY',
    );
    expect(filled.map((p) => [new Date(p.time).toISOString().slice(0, 10), p.requests])).toEqual([
      ['2026-11-18', 0],
      ['2026-11-19', 2],
      ['2026-11-20', 0],
    ]);
  });
});
