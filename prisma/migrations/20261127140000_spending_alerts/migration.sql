-- Spending alerts to webhooks (see schema.prisma, SpendingAlertDelivery): a gate's webhook, the
-- account's default and signing secret, and every delivery with its attempts.

ALTER TABLE "gates" ADD COLUMN "spending_alert_webhook" TEXT;
ALTER TABLE "users" ADD COLUMN "spending_alert_webhook" TEXT;
ALTER TABLE "users" ADD COLUMN "webhook_signing_secret" TEXT;

CREATE TABLE "spending_alert_deliveries" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "gate_id" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_status" INTEGER,
    "last_error" TEXT,
    "next_attempt_at" TIMESTAMPTZ(3),
    "delivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "spending_alert_deliveries_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "spending_alert_deliveries_user_id_created_at_idx" ON "spending_alert_deliveries"("user_id", "created_at");
CREATE INDEX "spending_alert_deliveries_next_attempt_at_idx" ON "spending_alert_deliveries"("next_attempt_at");
ALTER TABLE "spending_alert_deliveries" ADD CONSTRAINT "spending_alert_deliveries_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
