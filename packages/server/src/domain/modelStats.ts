/**
 * What this gateway has seen of each model: attempts, errors, latency percentiles and cost per
 * answered request, over a window, read from the hourly per-model totals (model_rollups, kept by
 * the log writer) so the cost does not grow with the log. Latency percentiles come from each
 * hour's histogram over LATENCY_EDGES_MS, read to the bucket and interpolated within it.
 */
import { sql } from '../db/client.ts';

/** Upper edges (ms) of the latency buckets; the last bucket holds everything from the last edge up. */
export const LATENCY_EDGES_MS = [
  100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10000, 15000, 20000, 30000, 60000, 120000,
] as const;
export const LATENCY_BUCKETS = LATENCY_EDGES_MS.length + 1;

/** The bucket a latency falls in: the number of edges at or below it. */
export function latencyBucketOf(ms: number): number {
  let i = 0;
  while (i < LATENCY_EDGES_MS.length && ms >= (LATENCY_EDGES_MS[i] as number)) i++;
  return i;
}

/** The p-th percentile (0–1) of a histogram over LATENCY_EDGES_MS; null when it is empty. */
export function histogramPercentile(hist: readonly number[], p: number): number | null {
  const total = hist.reduce((n, c) => n + c, 0);
  if (total === 0) return null;
  const rank = p * total;
  let below = 0;
  for (let i = 0; i < hist.length; i++) {
    const count = hist[i] as number;
    if (count > 0 && below + count >= rank) {
      const low = i === 0 ? 0 : (LATENCY_EDGES_MS[i - 1] as number);
      const high = LATENCY_EDGES_MS[i];
      // The open last bucket: its lower edge is all that is known.
      if (high === undefined) return low;
      return Math.round(low + ((rank - below) / count) * (high - low));
    }
    below += count;
  }
  return LATENCY_EDGES_MS[LATENCY_EDGES_MS.length - 1] as number;
}

export type ObservedModel = {
  model: string;
  /** Attempts made with the model, and how many failed. */
  attempts: number;
  errors: number;
  /** Requests it answered (attempts that did not fail). */
  answered: number;
  errorRate: number;
  p50Ms: number | null;
  p95Ms: number | null;
  meanLatencyMs: number | null;
  /** USD per answered request, and per 1,000 tokens of its answers (null without tokens). */
  meanCostUsd: number | null;
  costPer1kTokens: number | null;
  promptTokens: number;
  completionTokens: number;
};

// Each bucket summed by position: cheaper than unnesting every row's histogram.
const HIST_SUMS = Array.from(
  { length: LATENCY_BUCKETS },
  (_, i) => `sum(latency_hist[${i + 1}]) AS h${i}`,
).join(', ');

type ObservedRow = {
  model: string;
  attempts: string | number;
  errors: string | number;
  cost: string | number;
  latency: string | number;
  prompt: string | number;
  completion: string | number;
} & Record<`h${number}`, string | number | null>;

export type ObservedWindow = { since: Date; until: Date; gateId?: string | undefined };

/** The owner's figures per model over the window (one gate's, when `gateId` is given). */
export async function observedModels(userId: string, w: ObservedWindow): Promise<Map<string, ObservedModel>> {
  const params: unknown[] = [userId, w.since.toISOString(), w.until.toISOString()];
  if (w.gateId) params.push(w.gateId);
  const rows = await sql().query<ObservedRow>(
    `SELECT model, sum(attempts) AS attempts, sum(errors) AS errors, sum(cost_usd) AS cost,
            sum(latency_ms_sum) AS latency, sum(prompt_tokens) AS prompt, sum(completion_tokens) AS completion,
            ${HIST_SUMS}
     FROM model_rollups
     WHERE user_id = $1::uuid AND hour >= date_trunc('hour', $2::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
       AND hour < $3::timestamptz ${w.gateId ? 'AND gate_id = $4::uuid' : ''}
     GROUP BY model`,
    params,
  );
  const out = new Map<string, ObservedModel>();
  for (const r of rows) {
    const attempts = Number(r.attempts);
    const errors = Number(r.errors);
    const answered = attempts - errors;
    const cost = Number(r.cost);
    const prompt = Number(r.prompt);
    const completion = Number(r.completion);
    const hist = Array.from({ length: LATENCY_BUCKETS }, (_, i) => Number(r[`h${i}`] ?? 0));
    out.set(r.model, {
      model: r.model,
      attempts,
      errors,
      answered,
      errorRate: attempts > 0 ? errors / attempts : 0,
      p50Ms: histogramPercentile(hist, 0.5),
      p95Ms: histogramPercentile(hist, 0.95),
      meanLatencyMs: attempts > 0 ? Math.round(Number(r.latency) / attempts) : null,
      meanCostUsd: answered > 0 ? cost / answered : null,
      costPer1kTokens: prompt + completion > 0 ? (cost / (prompt + completion)) * 1000 : null,
      promptTokens: prompt,
      completionTokens: completion,
    });
  }
  return out;
}

/**
 * Rebuilds these users' per-model totals from their log entries (the seed scripts write entries
 * directly; the migration that made the table ran the same statement over the whole log).
 */
export async function rebuildModelRollups(userIds: string[]): Promise<void> {
  await sql().query('DELETE FROM model_rollups WHERE user_id = ANY($1::uuid[])', [userIds]);
  await sql().query(MODEL_ROLLUPS_FROM_ENTRIES, [userIds]);
}

const MODEL_ROLLUPS_FROM_ENTRIES = `INSERT INTO "model_rollups" ("user_id", "gate_id", "model", "hour", "attempts", "errors", "cost_usd", "latency_ms_sum", "latency_hist", "prompt_tokens", "completion_tokens")
SELECT user_id, gate_id, model, hour, count(*)::int, count(*) FILTER (WHERE NOT ok)::int,
  coalesce(sum(cost), 0), sum(latency),
  ARRAY[
    count(*) FILTER (WHERE latency < 100)::int,
    count(*) FILTER (WHERE latency >= 100 AND latency < 200)::int,
    count(*) FILTER (WHERE latency >= 200 AND latency < 300)::int,
    count(*) FILTER (WHERE latency >= 300 AND latency < 500)::int,
    count(*) FILTER (WHERE latency >= 500 AND latency < 750)::int,
    count(*) FILTER (WHERE latency >= 750 AND latency < 1000)::int,
    count(*) FILTER (WHERE latency >= 1000 AND latency < 1500)::int,
    count(*) FILTER (WHERE latency >= 1500 AND latency < 2000)::int,
    count(*) FILTER (WHERE latency >= 2000 AND latency < 3000)::int,
    count(*) FILTER (WHERE latency >= 3000 AND latency < 5000)::int,
    count(*) FILTER (WHERE latency >= 5000 AND latency < 7500)::int,
    count(*) FILTER (WHERE latency >= 7500 AND latency < 10000)::int,
    count(*) FILTER (WHERE latency >= 10000 AND latency < 15000)::int,
    count(*) FILTER (WHERE latency >= 15000 AND latency < 20000)::int,
    count(*) FILTER (WHERE latency >= 20000 AND latency < 30000)::int,
    count(*) FILTER (WHERE latency >= 30000 AND latency < 60000)::int,
    count(*) FILTER (WHERE latency >= 60000 AND latency < 120000)::int,
    count(*) FILTER (WHERE latency >= 120000)::int],
  coalesce(sum(prompt_tokens) FILTER (WHERE ok), 0), coalesce(sum(completion_tokens) FILTER (WHERE ok), 0)
FROM (
  SELECT l.user_id, l.gate_id, a->>'model' AS model,
         date_trunc('hour', l.created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour,
         coalesce((a->>'ok')::boolean, false) AS ok, greatest(coalesce((a->>'latencyMs')::numeric, 0), 0)::bigint AS latency,
         -- The answer's model: the entry's cost less what the failed attempts were charged; a failed
         -- attempt: what it was charged.
         CASE WHEN coalesce((a->>'ok')::boolean, false)
              THEN l.cost_usd - coalesce((SELECT sum(greatest(coalesce((f->>'costUsd')::numeric, 0), 0))
                                          FROM jsonb_array_elements(l.attempts) f
                                          WHERE NOT coalesce((f->>'ok')::boolean, false)), 0)
              ELSE greatest(coalesce((a->>'costUsd')::numeric, 0), 0) END AS cost,
         l.prompt_tokens, l.completion_tokens
  FROM log_entries l
  CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(l.attempts) = 'array' THEN l.attempts ELSE '[]'::jsonb END) a
  WHERE l.user_id = ANY($1::uuid[]) AND l.gate_id IS NOT NULL AND jsonb_typeof(a->'model') = 'string'
) t
GROUP BY user_id, gate_id, model, hour`;
