import path from 'node:path';
import { z } from 'zod';

const flag = z
  .enum(['0', '1', 'true', 'false', ''])
  .default('0')
  .transform((v) => v === '1' || v === 'true');

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  GATEHOUSE_OPEN_SIGNUP: flag,
  GATEHOUSE_SECURE_COOKIES: flag,
  GATEHOUSE_SESSION_DAYS: z.coerce.number().int().min(1).max(365).default(14),
  GATEHOUSE_WEB_DIST: z.string().optional(),
});

export type Config = {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  /** PGlite's data directory, used when no databaseUrl is set; `memory://` keeps it in memory. */
  dataDir: string;
  databaseUrl: string | undefined;
  openSignup: boolean;
  secureCookies: boolean;
  sessionDays: number;
  webDist: string;
};

const repoRoot = path.resolve(import.meta.dirname, '../../..');

/** Parses the environment once; throws a readable message naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  // pnpm runs scripts inside the package; INIT_CWD is where the user typed the command.
  const base = env.INIT_CWD ?? process.cwd();
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    dataDir: e.DATA_DIR.startsWith('memory://') ? e.DATA_DIR : path.resolve(base, e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    openSignup: e.GATEHOUSE_OPEN_SIGNUP,
    secureCookies: e.GATEHOUSE_SECURE_COOKIES,
    sessionDays: e.GATEHOUSE_SESSION_DAYS,
    webDist: e.GATEHOUSE_WEB_DIST
      ? path.resolve(base, e.GATEHOUSE_WEB_DIST)
      : path.join(repoRoot, 'packages/web/dist'),
  };
}

export const migrationsDir = path.join(repoRoot, 'prisma/migrations');
