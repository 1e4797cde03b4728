-- Log search (issue 29): the words of an entry's prompt, answer and error as a tsvector (the
-- 'simple' configuration: lower-cased words, no stemming, any language), written by the log writer
-- from at most 16,000 characters of them, and a GIN index over it. Entries logged before this
-- migration have none: they are found by every other filter, not by words.
ALTER TABLE "log_entries" ADD COLUMN "search" tsvector;
CREATE INDEX "log_entries_search_idx" ON "log_entries" USING GIN ("search");
