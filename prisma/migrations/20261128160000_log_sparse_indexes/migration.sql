-- The log's filters by agent session, client session, API key and end user read an owner's entries
-- of one value, newest first. Each index now holds only the entries that have such a value: an
-- entry without one (most requests name no session or end user; the dashboard's carry no key)
-- costs it no write. The filters compare the column for equality, which implies IS NOT NULL, so
-- the planner still uses them.
DROP INDEX "log_entries_gate_session_id_created_at_idx";
CREATE INDEX "log_entries_gate_session_id_created_at_idx" ON "log_entries"("gate_session_id", "created_at") WHERE "gate_session_id" IS NOT NULL;
DROP INDEX "log_entries_user_id_session_id_created_at_id_idx";
CREATE INDEX "log_entries_user_id_session_id_created_at_id_idx" ON "log_entries"("user_id", "session_id", "created_at" DESC, "id" DESC) WHERE "session_id" IS NOT NULL;
DROP INDEX "log_entries_user_id_api_key_id_created_at_id_idx";
CREATE INDEX "log_entries_user_id_api_key_id_created_at_id_idx" ON "log_entries"("user_id", "api_key_id", "created_at" DESC, "id" DESC) WHERE "api_key_id" IS NOT NULL;
DROP INDEX "log_entries_user_id_end_user_created_at_id_idx";
CREATE INDEX "log_entries_user_id_end_user_created_at_id_idx" ON "log_entries"("user_id", "end_user", "created_at" DESC, "id" DESC) WHERE "end_user" IS NOT NULL;
