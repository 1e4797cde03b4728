-- What the client sent, on the entry of a request refused before any provider call (see
-- schema.prisma, LogEntry.clientRequest): such an entry has no provider request to show it.

ALTER TABLE "log_entries" ADD COLUMN "client_request" JSONB;
