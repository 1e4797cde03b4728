-- Why an entry's cost is its worst case rather than the provider's usage (see schema.prisma,
-- LogEntry.usageNote): set when the usage reported was negative, not a number or absurd.

ALTER TABLE "log_entries" ADD COLUMN "usage_note" TEXT;
