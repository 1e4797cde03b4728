-- The files an answer carried (images, speech), apart from their log entry (see schema.prisma,
-- LogMedia): written with the entry, deleted with it.

CREATE TABLE "log_media" (
    "log_entry_id" UUID NOT NULL,
    "index" INTEGER NOT NULL,
    "user_id" UUID NOT NULL,
    "mime_type" TEXT NOT NULL,
    "data" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "log_media_pkey" PRIMARY KEY ("log_entry_id", "index")
);
ALTER TABLE "log_media" ADD CONSTRAINT "log_media_log_entry_id_fkey" FOREIGN KEY ("log_entry_id") REFERENCES "log_entries"("id") ON DELETE CASCADE ON UPDATE CASCADE;
