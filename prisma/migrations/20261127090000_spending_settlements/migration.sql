-- Settlements drained from Redis into the gates' counters, once per reservation and gate: a
-- batch written again (its answer lost, or re-read by another process) changes nothing.
CREATE TABLE "spending_settlements" (
    "reservation_id" UUID NOT NULL,
    "gate_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "spending_settlements_pkey" PRIMARY KEY ("reservation_id", "gate_id")
);
CREATE INDEX "spending_settlements_created_at_idx" ON "spending_settlements"("created_at");
