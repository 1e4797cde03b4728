-- Keys that govern: an API key's own spending limit (daily, monthly or over its lifetime), the
-- gates and task types it may use, its expiry, free metadata, and the secret it replaced (valid
-- until a grace period ends, after a roll).
ALTER TABLE "api_keys"
  ADD COLUMN "spending_limit" DECIMAL(18,8),
  ADD COLUMN "spending_limit_period" TEXT NOT NULL DEFAULT 'monthly',
  ADD COLUMN "spending_enforcement" TEXT NOT NULL DEFAULT 'block',
  ADD COLUMN "spending_current" DECIMAL(18,8) NOT NULL DEFAULT 0,
  ADD COLUMN "spending_period_start" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  ADD COLUMN "spending_status" TEXT NOT NULL DEFAULT 'active',
  ADD COLUMN "spending_alerted_at" TIMESTAMPTZ(3),
  ADD COLUMN "allowed_gates" UUID[] DEFAULT ARRAY[]::UUID[],
  ADD COLUMN "allowed_task_types" TEXT[] DEFAULT ARRAY[]::TEXT[],
  ADD COLUMN "expires_at" TIMESTAMPTZ(3),
  ADD COLUMN "metadata" JSONB NOT NULL DEFAULT '{}',
  ADD COLUMN "previous_key_hash" TEXT,
  ADD COLUMN "previous_key_expires_at" TIMESTAMPTZ(3);
CREATE UNIQUE INDEX "api_keys_previous_key_hash_key" ON "api_keys"("previous_key_hash");

-- What any one end user may spend through a gate, per period; NULL is no limit.
ALTER TABLE "gates"
  ADD COLUMN "end_user_spending_limit" DECIMAL(18,8),
  ADD COLUMN "end_user_spending_limit_period" TEXT NOT NULL DEFAULT 'monthly';

-- Each end user's spending through a gate this period (the gate's end-user limit holds it).
CREATE TABLE "end_user_spending" (
    "gate_id" UUID NOT NULL,
    "end_user" TEXT NOT NULL,
    "spending_current" DECIMAL(18,8) NOT NULL DEFAULT 0,
    "spending_period_start" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "end_user_spending_pkey" PRIMARY KEY ("gate_id", "end_user"),
    CONSTRAINT "end_user_spending_gate_id_fkey" FOREIGN KEY ("gate_id") REFERENCES "gates"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- Attribution: the key a request came with (its name as it was) and the end user it named.
ALTER TABLE "log_entries"
  ADD COLUMN "api_key_id" UUID,
  ADD COLUMN "api_key_name" TEXT,
  ADD COLUMN "end_user" TEXT;
CREATE INDEX "log_entries_user_id_api_key_id_created_at_id_idx" ON "log_entries"("user_id", "api_key_id", "created_at" DESC, "id" DESC);
CREATE INDEX "log_entries_user_id_end_user_created_at_id_idx" ON "log_entries"("user_id", "end_user", "created_at" DESC, "id" DESC);
