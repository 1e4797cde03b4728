-- Replays (issue 29): the entry a request replayed, named by the dashboard's Replay in the
-- x-gatehouse-replay-of header. Indexed only where set: an entry that is no replay costs no write.
ALTER TABLE "log_entries" ADD COLUMN "replay_of" UUID;
CREATE INDEX "log_entries_replay_of_idx" ON "log_entries"("replay_of") WHERE "replay_of" IS NOT NULL;
