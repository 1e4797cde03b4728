-- Foundation: accounts, sessions, API keys, gates, log entries.

CREATE TABLE "users" (
    "id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "password_hash" TEXT NOT NULL,
    "plan" TEXT NOT NULL DEFAULT 'free',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "users_email_key" ON "users"("email");

CREATE TABLE "sessions" (
    "id" TEXT NOT NULL,
    "user_id" UUID NOT NULL,
    "csrf_token" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "sessions_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "sessions_user_id_idx" ON "sessions"("user_id");

CREATE TABLE "api_keys" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "key_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys"("key_hash");
CREATE INDEX "api_keys_user_id_created_at_idx" ON "api_keys"("user_id", "created_at");

CREATE TABLE "gates" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "auto_enhance_description" BOOLEAN NOT NULL DEFAULT false,
    "task_type" TEXT NOT NULL,
    "task_subtype" TEXT,
    "tags" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "model" TEXT NOT NULL,
    "routing_strategy" TEXT NOT NULL DEFAULT 'single',
    "fallback_models" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "system_prompt" TEXT,
    "temperature" DOUBLE PRECISION,
    "max_tokens" INTEGER,
    "top_p" DOUBLE PRECISION,
    "allow_overrides" JSONB NOT NULL DEFAULT 'false',
    "cost_weight" DOUBLE PRECISION,
    "latency_weight" DOUBLE PRECISION,
    "quality_weight" DOUBLE PRECISION,
    "analysis_method" TEXT,
    "max_cost_per_1k_tokens" DOUBLE PRECISION,
    "max_latency_ms" INTEGER,
    "reanalysis_period" TEXT NOT NULL DEFAULT 'never',
    "auto_apply_recommendations" BOOLEAN NOT NULL DEFAULT false,
    "task_analysis" JSONB,
    "response_format_enabled" BOOLEAN NOT NULL DEFAULT false,
    "response_format_type" TEXT NOT NULL DEFAULT 'text',
    "response_format_schema" JSONB,
    "spending_limit" DECIMAL(18,8),
    "spending_limit_period" TEXT NOT NULL DEFAULT 'monthly',
    "spending_enforcement" TEXT NOT NULL DEFAULT 'alert_only',
    "spending_current" DECIMAL(18,8) NOT NULL DEFAULT 0,
    "spending_period_start" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "spending_status" TEXT NOT NULL DEFAULT 'active',
    "spending_alerted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "gates_pkey" PRIMARY KEY ("id"),
    -- The rules live in the application; these keep a bad write from anywhere out of the table.
    CONSTRAINT "gates_temperature_range" CHECK ("temperature" IS NULL OR "temperature" BETWEEN 0 AND 2),
    CONSTRAINT "gates_top_p_range" CHECK ("top_p" IS NULL OR "top_p" BETWEEN 0 AND 1),
    CONSTRAINT "gates_spending_current_nonnegative" CHECK ("spending_current" >= 0)
);
CREATE UNIQUE INDEX "gates_user_id_name_key" ON "gates"("user_id", "name");
CREATE INDEX "gates_user_id_created_at_idx" ON "gates"("user_id", "created_at");

CREATE TABLE "log_entries" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "gate_id" UUID,
    "gate_name" TEXT,
    "endpoint" TEXT NOT NULL,
    "model_requested" TEXT,
    "model_used" TEXT,
    "prompt_tokens" INTEGER NOT NULL DEFAULT 0,
    "completion_tokens" INTEGER NOT NULL DEFAULT 0,
    "tokens_estimated" BOOLEAN NOT NULL DEFAULT false,
    "cost_usd" DECIMAL(18,8) NOT NULL DEFAULT 0,
    "latency_ms" INTEGER NOT NULL DEFAULT 0,
    "success" BOOLEAN NOT NULL,
    "status_code" INTEGER NOT NULL,
    "error_code" TEXT,
    "error_message" TEXT,
    "session_id" TEXT,
    "inferred_action" TEXT,
    "tool_calls" JSONB,
    "tool_results" JSONB,
    "attempts" JSONB NOT NULL DEFAULT '[]',
    "ignored_overrides" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "spending_warning" BOOLEAN NOT NULL DEFAULT false,
    "stream" BOOLEAN NOT NULL DEFAULT false,
    "metadata" JSONB,
    "provider_request" JSONB,
    "provider_response" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "log_entries_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "log_entries_user_id_created_at_id_idx" ON "log_entries"("user_id", "created_at" DESC, "id" DESC);
CREATE INDEX "log_entries_gate_id_created_at_id_idx" ON "log_entries"("gate_id", "created_at" DESC, "id" DESC);
CREATE INDEX "log_entries_user_id_success_created_at_id_idx" ON "log_entries"("user_id", "success", "created_at" DESC, "id" DESC);

ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "gates" ADD CONSTRAINT "gates_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "log_entries" ADD CONSTRAINT "log_entries_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "log_entries" ADD CONSTRAINT "log_entries_gate_id_fkey" FOREIGN KEY ("gate_id") REFERENCES "gates"("id") ON DELETE SET NULL ON UPDATE CASCADE;
