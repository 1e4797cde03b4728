-- Settlements written from Redis into the counters, once per reservation and scope (a gate
-- 'g:<id>', a key 'k:<id>', an end user 'e:<gate id>:<end user>'): a batch written again (its
-- answer lost, or written by another process) changes nothing.
CREATE TABLE "spending_settlements" (
    "reservation_id" UUID NOT NULL,
    "scope" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "spending_settlements_pkey" PRIMARY KEY ("reservation_id", "scope")
);
CREATE INDEX "spending_settlements_created_at_idx" ON "spending_settlements"("created_at");
