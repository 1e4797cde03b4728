import { credentialsSchema, type PlanId, signInSchema } from '@gatehouse/rules/account';
import { onChange, publish } from '../db/changes.ts';
import { prisma } from '../db/client.ts';
import { transaction } from '../db/transaction.ts';
import type { User } from '../generated/prisma/client.ts';
import { createApiKey, type IssuedApiKey } from './apiKeys.ts';
import {
  AccountDisabledError,
  ConflictError,
  ForbiddenError,
  parseWith,
  UnauthorizedError,
} from './errors.ts';
import { hotCache } from './hotCache.ts';
import { ADMIN_PLAN } from './plans.ts';
import { hashPassword, randomToken, sha256, verifyPassword } from './secrets.ts';
import {
  type SignInLimits,
  type SignUpLimits,
  withinSignInLimits,
  withinSignUpLimits,
} from './signInLimits.ts';

export type SessionGrant = { token: string; csrfToken: string; expiresAt: Date; user: User };

// Whether an account exists: asked by anyone, signed in or not, on every visit to the dashboard,
// so answered from memory for a few seconds, one read shared by all who ask meanwhile.
const accountsExist = hotCache<boolean>({ ttlMs: 5_000, maxEntries: 1 });
onChange((heard) => {
  if (heard.kind === 'everything' || heard.kind === 'account') accountsExist.forget('');
});

export type SignUpOptions = {
  openSignup: boolean;
  /** The plan of every account but the first (GATEHOUSE_DEFAULT_PLAN); free when not given. */
  defaultPlan?: PlanId;
};

/**
 * Anyone may sign up while no account exists, or when open sign-up is configured. The first
 * account is the instance's admin, on the enterprise plan; every later one is on the default plan.
 */
export async function signUp(raw: unknown, opts: SignUpOptions): Promise<User> {
  const { email, password } = parseWith(credentialsSchema, raw);
  const passwordHash = await hashPassword(password);
  const user = await transaction(async (tx) => {
    // Serialises sign-ups, so two first-account requests cannot both pass the check below.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(727002)`;
    const first = (await tx.user.count()) === 0;
    if (!opts.openSignup && !first) {
      throw new ForbiddenError(
        'Sign-up is closed: an account exists already. Set GATEHOUSE_OPEN_SIGNUP=1 to let others sign up.',
      );
    }
    if (await tx.user.findUnique({ where: { email } })) {
      throw new ConflictError('An account with this email exists already', 'email');
    }
    const plan = first ? ADMIN_PLAN : (opts.defaultPlan ?? 'free');
    return tx.user.create({ data: { email, passwordHash, plan, isAdmin: first } });
  });
  await publish({ kind: 'account', userId: user.id }); // after the commit: a read before it must not be kept
  return user;
}

export async function signupOpen(opts: { openSignup: boolean }): Promise<boolean> {
  return opts.openSignup || (await noAccountYet());
}

/** No account exists yet: whoever signs up now administers this Gatehouse. */
export async function noAccountYet(): Promise<boolean> {
  const exist = await accountsExist.get(
    '',
    async () => (await prisma.user.findFirst({ select: { id: true } })) !== null,
  );
  return !exist;
}

// A real hash to verify against when the email is unknown, so both paths take as long.
const dummyHash = hashPassword(randomToken());

/** A session for the right email and password, within the limits on failed sign-ins. */
export async function signIn(
  raw: unknown,
  opts: { sessionDays: number; signInLimits: SignInLimits },
  from: { address: string },
): Promise<SessionGrant> {
  const { email, password } = parseWith(signInSchema, raw);
  return withinSignInLimits(opts.signInLimits, { email, address: from.address }, async () => {
    const user = await prisma.user.findUnique({ where: { email } });
    const ok = await verifyPassword(password, user?.passwordHash ?? (await dummyHash));
    if (!user || !ok) throw new UnauthorizedError('Invalid email or password');
    if (user.disabledAt) throw new AccountDisabledError();
    return startSession(user, opts);
  });
}

async function startSession(user: User, opts: { sessionDays: number }): Promise<SessionGrant> {
  const token = randomToken();
  const csrfToken = randomToken();
  const expiresAt = new Date(Date.now() + opts.sessionDays * 86_400_000);
  await prisma.session.create({ data: { id: sha256(token), userId: user.id, csrfToken, expiresAt } });
  return { token, csrfToken, expiresAt, user };
}

export async function signOut(token: string): Promise<void> {
  await prisma.session.deleteMany({ where: { id: sha256(token) } });
}

/** The session and its user (disabled or not: the caller refuses it), or null when unknown or expired. */
export async function findSession(token: string) {
  const session = await prisma.session.findUnique({
    where: { id: sha256(token) },
    include: { user: true },
  });
  if (!session || session.expiresAt <= new Date()) return null;
  return session;
}

/**
 * The whole first step for a newcomer: the account, a signed-in session, and a first API key
 * (its secret returned this once), so the API is usable straight away.
 */
export async function registerAccount(
  raw: unknown,
  opts: SignUpOptions & { sessionDays: number; signUpLimits: SignUpLimits },
  from: { address: string },
): Promise<{ grant: SessionGrant; issued: IssuedApiKey }> {
  return withinSignUpLimits(opts.signUpLimits, from.address, async () => {
    const user = await signUp(raw, opts);
    const grant = await startSession(user, opts);
    const issued = await createApiKey(grant.user.id, { name: 'Default key' });
    return { grant, issued };
  });
}
