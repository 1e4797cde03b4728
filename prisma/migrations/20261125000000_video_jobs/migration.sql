-- Video jobs (see schema.prisma, VideoJob): a video request while it runs and after, readable
-- from any gateway process sharing the database; deleted with its owner.

CREATE TABLE "video_jobs" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "gate_id" UUID NOT NULL,
    "status" TEXT NOT NULL,
    "result" JSONB,
    "video" BYTEA,
    "error" JSONB,
    "deadline" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "video_jobs_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "video_jobs_user_id_idx" ON "video_jobs"("user_id");
ALTER TABLE "video_jobs" ADD CONSTRAINT "video_jobs_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
