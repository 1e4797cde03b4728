-- Agent gates (issue 13): the gate type and its agent fields, sub-gates with their roles, agent
-- sessions, and the log entries' link to their session (see schema.prisma: Gate, SubGate,
-- AgentSession, LogEntry). visible_tools is a JSON array of tool names, NULL for every tool (Prisma
-- reads a NULL text[] as an empty list).

ALTER TABLE "gates"
    ADD COLUMN "gate_type" TEXT NOT NULL DEFAULT 'standard',
    ADD COLUMN "agent_mode" TEXT,
    ADD COLUMN "orchestration" TEXT,
    ADD COLUMN "session_spending_limit" DECIMAL(18,8),
    ADD COLUMN "session_idle_minutes" INTEGER NOT NULL DEFAULT 30,
    ADD COLUMN "max_requests_per_session" INTEGER,
    ADD COLUMN "visible_tools" JSONB;

CREATE TABLE "sub_gates" (
    "agent_gate_id" UUID NOT NULL,
    "sub_gate_id" UUID NOT NULL,
    "role" TEXT NOT NULL,
    "description" TEXT,
    "visible_tools" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "sub_gates_pkey" PRIMARY KEY ("agent_gate_id", "sub_gate_id"),
    CONSTRAINT "sub_gates_not_itself" CHECK ("agent_gate_id" <> "sub_gate_id")
);
CREATE UNIQUE INDEX "sub_gates_agent_gate_id_role_key" ON "sub_gates"("agent_gate_id", "role");
CREATE INDEX "sub_gates_sub_gate_id_idx" ON "sub_gates"("sub_gate_id");
ALTER TABLE "sub_gates" ADD CONSTRAINT "sub_gates_agent_gate_id_fkey" FOREIGN KEY ("agent_gate_id") REFERENCES "gates"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "sub_gates" ADD CONSTRAINT "sub_gates_sub_gate_id_fkey" FOREIGN KEY ("sub_gate_id") REFERENCES "gates"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "agent_sessions" (
    "id" UUID NOT NULL,
    "gate_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "session_key" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "request_count" INTEGER NOT NULL DEFAULT 0,
    "spending_current" DECIMAL(18,8) NOT NULL DEFAULT 0,
    "spending_reserved" DECIMAL(18,8) NOT NULL DEFAULT 0,
    "prompt_tokens" INTEGER NOT NULL DEFAULT 0,
    "completion_tokens" INTEGER NOT NULL DEFAULT 0,
    "topic" TEXT,
    "tools_called" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "sub_gates_used" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "last_tool_call" TEXT,
    "tool_call_repeats" INTEGER NOT NULL DEFAULT 0,
    "first_request_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_request_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ended_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "agent_sessions_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "agent_sessions_status_known" CHECK ("status" IN ('active', 'completed', 'runaway', 'budget_exceeded')),
    CONSTRAINT "agent_sessions_spending_nonnegative" CHECK ("spending_current" >= 0 AND "spending_reserved" >= 0)
);
CREATE UNIQUE INDEX "agent_sessions_gate_id_session_key_key" ON "agent_sessions"("gate_id", "session_key");
CREATE INDEX "agent_sessions_gate_id_last_request_at_id_idx" ON "agent_sessions"("gate_id", "last_request_at" DESC, "id" DESC);
CREATE INDEX "agent_sessions_user_id_session_key_idx" ON "agent_sessions"("user_id", "session_key");
ALTER TABLE "agent_sessions" ADD CONSTRAINT "agent_sessions_gate_id_fkey" FOREIGN KEY ("gate_id") REFERENCES "gates"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "agent_sessions" ADD CONSTRAINT "agent_sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "log_entries"
    ADD COLUMN "gate_session_id" UUID,
    ADD COLUMN "hidden_tools" TEXT[] DEFAULT ARRAY[]::TEXT[];
CREATE INDEX "log_entries_gate_session_id_created_at_idx" ON "log_entries"("gate_session_id", "created_at");
CREATE INDEX "log_entries_user_id_session_id_created_at_id_idx" ON "log_entries"("user_id", "session_id", "created_at" DESC, "id" DESC);
ALTER TABLE "log_entries" ADD CONSTRAINT "log_entries_gate_session_id_fkey" FOREIGN KEY ("gate_session_id") REFERENCES "agent_sessions"("id") ON DELETE SET NULL ON UPDATE CASCADE;
