-- Issue 29: a session shows every request, refused ones included. refused_count counts the
-- requests refused before any provider call (request_count counts those that reached one);
-- last_request_failed lets the shown status follow the requests (FAILING).
ALTER TABLE "agent_sessions" ADD COLUMN "refused_count" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "agent_sessions" ADD COLUMN "last_request_failed" BOOLEAN NOT NULL DEFAULT false;
