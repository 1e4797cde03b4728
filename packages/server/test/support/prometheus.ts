/** GET /metrics read with a real Prometheus text-format parser (parse-prometheus-text-format). */
import { createRequire } from 'node:module';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';

type Sample = {
  labels?: Record<string, string>;
  value?: string;
  count?: string;
  sum?: string;
  buckets?: Record<string, string>;
};
export type MetricFamily = {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: Sample[];
};

// The package ships CommonJS without types.
const parsePrometheus = createRequire(import.meta.url)('parse-prometheus-text-format') as (
  text: string,
) => MetricFamily[];

export async function scrape(app: TestApp, headers: Record<string, string> = {}) {
  const res = await app.request('/metrics', { headers });
  expect(res.status, await res.clone().text()).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  const families = parsePrometheus(await res.text());
  const family = (name: string) => families.find((f) => f.name === name);
  return {
    families,
    family,
    /** The samples of `name` whose labels include `match`. */
    samples(name: string, match: Record<string, string> = {}): Sample[] {
      return (family(name)?.metrics ?? []).filter((m) =>
        Object.entries(match).every(([k, v]) => m.labels?.[k] === v),
      );
    },
    /** The sum of the values (a histogram's counts) of `name` whose labels include `match`. */
    total(name: string, match: Record<string, string> = {}): number {
      return this.samples(name, match).reduce((n, m) => n + Number(m.value ?? m.count ?? 0), 0);
    },
  };
}
