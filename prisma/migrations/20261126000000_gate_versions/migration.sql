-- Gate history (issue 14 item 5): one row per change of a gate's settings, written in the same
-- transaction as the change (see schema.prisma, GateVersion). settings is the whole snapshot
-- after the change, as the gate's REST JSON shows its settings, so a rollback restores it exactly.

CREATE TABLE "gate_versions" (
    "id" UUID NOT NULL,
    "gate_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "version" INTEGER NOT NULL,
    "changed_by" TEXT NOT NULL,
    "actor_user_id" UUID,
    "rolled_back_to" UUID,
    "changed_fields" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "settings" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "gate_versions_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "gate_versions_changed_by_known" CHECK ("changed_by" IN ('user', 'architect', 'rollback')),
    CONSTRAINT "gate_versions_version_positive" CHECK ("version" >= 1)
);
-- Also the index of the newest-first listing: (gate_id, version DESC) reads it backwards.
CREATE UNIQUE INDEX "gate_versions_gate_id_version_key" ON "gate_versions"("gate_id", "version");
ALTER TABLE "gate_versions" ADD CONSTRAINT "gate_versions_gate_id_fkey" FOREIGN KEY ("gate_id") REFERENCES "gates"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "gate_versions" ADD CONSTRAINT "gate_versions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "gate_versions" ADD CONSTRAINT "gate_versions_actor_user_id_fkey" FOREIGN KEY ("actor_user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "gate_versions" ADD CONSTRAINT "gate_versions_rolled_back_to_fkey" FOREIGN KEY ("rolled_back_to") REFERENCES "gate_versions"("id") ON DELETE SET NULL ON UPDATE CASCADE;
