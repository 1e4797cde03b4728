-- Rate limits per gate and per API key: requests and tokens per minute, over a sliding window
-- (see schema.prisma, Gate.rateLimitRpm). NULL is no limit.

ALTER TABLE "gates" ADD COLUMN "rate_limit_rpm" INTEGER;
ALTER TABLE "gates" ADD COLUMN "rate_limit_tpm" INTEGER;
ALTER TABLE "api_keys" ADD COLUMN "rate_limit_rpm" INTEGER;
ALTER TABLE "api_keys" ADD COLUMN "rate_limit_tpm" INTEGER;
