-- Self-hosted accounts (issue 11, item 4): the first account administers the instance, and an
-- account can be disabled (see schema.prisma, User).

ALTER TABLE "users" ADD COLUMN "is_admin" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "users" ADD COLUMN "disabled_at" TIMESTAMPTZ(3);

-- An instance that has accounts already: its first account becomes the admin, on enterprise.
UPDATE "users" SET "is_admin" = true, "plan" = 'enterprise'
WHERE "id" = (SELECT "id" FROM "users" ORDER BY "created_at", "id" LIMIT 1);
