-- Per-hour totals of the log, for the overview and the charts (see schema.prisma, LogRollup).

CREATE TABLE "log_rollups" (
    "user_id" UUID NOT NULL,
    "gate_id" UUID NOT NULL,
    "hour" TIMESTAMPTZ(3) NOT NULL,
    "requests" INTEGER NOT NULL DEFAULT 0,
    "errors" INTEGER NOT NULL DEFAULT 0,
    "cost_usd" DECIMAL(18,8) NOT NULL DEFAULT 0,
    "latency_ms_sum" BIGINT NOT NULL DEFAULT 0,
    "prompt_tokens" BIGINT NOT NULL DEFAULT 0,
    "completion_tokens" BIGINT NOT NULL DEFAULT 0,
    CONSTRAINT "log_rollups_pkey" PRIMARY KEY ("user_id", "gate_id", "hour")
);
CREATE INDEX "log_rollups_user_id_hour_idx" ON "log_rollups"("user_id", "hour");
ALTER TABLE "log_rollups" ADD CONSTRAINT "log_rollups_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Totals of the entries written before this table existed.
INSERT INTO "log_rollups" ("user_id", "gate_id", "hour", "requests", "errors", "cost_usd", "latency_ms_sum", "prompt_tokens", "completion_tokens")
SELECT "user_id", "gate_id", date_trunc('hour', "created_at" AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', count(*), count(*) FILTER (WHERE NOT "success"),
       sum("cost_usd"), sum("latency_ms"), sum("prompt_tokens"), sum("completion_tokens")
FROM "log_entries" WHERE "gate_id" IS NOT NULL
GROUP BY 1, 2, 3;
