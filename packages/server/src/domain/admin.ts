/**
 * The instance's admin and the accounts it manages (issue 11, item 4). The admin is the first
 * account, and only it: no one is made admin later, and the admin cannot stop being one, so an
 * instance always has exactly one. The admin sees every account, sets each one's plan, and
 * disables or enables it; a disabled account's sessions and keys are refused at once (http/auth.ts)
 * while its gates, logs and keys stay, ready for when it is enabled again.
 */
import { accountUpdateSchema } from '@gatehouse/rules/account';
import { isUuid } from '@gatehouse/rules/ids';
import { publish } from '../db/changes.ts';
import { prisma } from '../db/client.ts';
import type { User } from '../generated/prisma/client.ts';
import { ForbiddenError, NotFoundError, parseWith, ValidationError } from './errors.ts';
import { ADMIN_PLAN } from './plans.ts';

/** Refuses anyone but the admin (403). */
export function requireAdmin(actor: User): void {
  if (!actor.isAdmin) throw new ForbiddenError('Only the admin of this Gatehouse manages accounts');
}

/** Every account, oldest first (the admin's first of all). */
export function listAccounts(actor: User): Promise<User[]> {
  requireAdmin(actor);
  return prisma.user.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
}

/**
 * Sets an account's plan, or disables or enables it. Both apply at once: the gate limit is read
 * from the account's row when a gate is created, and every process's cached keys of the account
 * are dropped (db/changes.ts). The admin's own account stays enabled and on the enterprise plan.
 */
export async function updateAccount(actor: User, id: string, raw: unknown): Promise<User> {
  requireAdmin(actor);
  const change = parseWith(accountUpdateSchema, raw);
  const account = isUuid(id) ? await prisma.user.findUnique({ where: { id } }) : null;
  if (!account) throw new NotFoundError('Account');
  if (account.isAdmin) {
    if (change.disabled === true) {
      throw new ValidationError([
        { path: 'disabled', message: 'the admin account cannot be disabled (it would lock everyone out)' },
      ]);
    }
    if (change.plan !== undefined && change.plan !== ADMIN_PLAN) {
      throw new ValidationError([{ path: 'plan', message: `the admin account's plan is ${ADMIN_PLAN}` }]);
    }
  }
  const disabledAt =
    change.disabled === undefined
      ? undefined
      : change.disabled
        ? (account.disabledAt ?? new Date()) // disabling twice keeps the first time
        : null;
  const updated = await prisma.user.update({
    where: { id },
    data: {
      ...(change.plan !== undefined && { plan: change.plan }),
      ...(disabledAt !== undefined && { disabledAt }),
    },
  });
  // After the write: a key lookup that ran before it must not keep the old account in the cache.
  await publish({ kind: 'account', userId: id });
  return updated;
}
