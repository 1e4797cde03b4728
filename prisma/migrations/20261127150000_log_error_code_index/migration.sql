-- Finding failures by error code (issue 29: model + error code on a large log): an owner's entries
-- of one code, newest first. Indexed only where there is a code, i.e. failed entries: a success,
-- the bulk of the log, costs no write.
CREATE INDEX "log_entries_user_id_error_code_created_at_id_idx" ON "log_entries"("user_id", "error_code", "created_at" DESC, "id" DESC) WHERE "error_code" IS NOT NULL;
