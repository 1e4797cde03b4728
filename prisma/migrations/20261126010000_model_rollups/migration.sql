-- Per-hour figures of each model a gate tried (every attempt, the fallbacks' too), for the
-- Architect's observed latency, error rate and cost (see schema.prisma, ModelRollup). Kept by the
-- log writer in the transaction that inserts the entries, like log_rollups.

CREATE TABLE "model_rollups" (
    "user_id" UUID NOT NULL,
    "gate_id" UUID NOT NULL,
    "model" TEXT NOT NULL,
    "hour" TIMESTAMPTZ(3) NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "errors" INTEGER NOT NULL DEFAULT 0,
    "cost_usd" DECIMAL(18,8) NOT NULL DEFAULT 0,
    "latency_ms_sum" BIGINT NOT NULL DEFAULT 0,
    "latency_hist" INTEGER[],
    "prompt_tokens" BIGINT NOT NULL DEFAULT 0,
    "completion_tokens" BIGINT NOT NULL DEFAULT 0,
    CONSTRAINT "model_rollups_pkey" PRIMARY KEY ("user_id", "gate_id", "model", "hour")
);
CREATE INDEX "model_rollups_user_id_hour_idx" ON "model_rollups"("user_id", "hour");
ALTER TABLE "model_rollups" ADD CONSTRAINT "model_rollups_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Figures of the entries written before this table existed (the same statement as
-- modelRollupsFromEntries in packages/server/src/domain/modelStats.ts).
INSERT INTO "model_rollups" ("user_id", "gate_id", "model", "hour", "attempts", "errors", "cost_usd", "latency_ms_sum", "latency_hist", "prompt_tokens", "completion_tokens")
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
  WHERE l.gate_id IS NOT NULL AND jsonb_typeof(a->'model') = 'string'
) t
GROUP BY user_id, gate_id, model, hour;
