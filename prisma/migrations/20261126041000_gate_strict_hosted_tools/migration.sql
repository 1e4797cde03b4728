-- Drop-in requests translated for a model of another family: a gate may refuse hosted tools the
-- model cannot run (400) instead of leaving them out (see schema.prisma, Gate.strictHostedTools).

ALTER TABLE "gates" ADD COLUMN "strict_hosted_tools" BOOLEAN NOT NULL DEFAULT false;
