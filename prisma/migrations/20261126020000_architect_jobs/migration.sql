-- The Architect's scheduled re-analyses (see schema.prisma, ArchitectJob): one row per gate and
-- reanalysisPeriod period, claimed by inserting it, so of several gateway processes sharing the
-- database exactly one runs each; the row then says what it did.

CREATE TABLE "architect_jobs" (
    "id" UUID NOT NULL,
    "gate_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "claimed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    "tries" INTEGER NOT NULL DEFAULT 1,
    "applied" BOOLEAN NOT NULL DEFAULT false,
    "previous_model" TEXT,
    "recommended_model" TEXT,
    "error" TEXT,
    CONSTRAINT "architect_jobs_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "architect_jobs_gate_id_period_start_key" ON "architect_jobs"("gate_id", "period_start");
CREATE INDEX "architect_jobs_status_claimed_at_idx" ON "architect_jobs"("status", "claimed_at");
ALTER TABLE "architect_jobs" ADD CONSTRAINT "architect_jobs_gate_id_fkey" FOREIGN KEY ("gate_id") REFERENCES "gates"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "architect_jobs" ADD CONSTRAINT "architect_jobs_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
