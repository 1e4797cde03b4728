/** The admin's queries and mutations (domain/admin.ts): anyone else gets a ForbiddenError. */
import { listAccounts, updateAccount } from '../../domain/admin.ts';
import { ForbiddenError, NotFoundError, ValidationError } from '../../domain/errors.ts';
import { builder } from '../builder.ts';
import { requireActor } from '../context.ts';
import { PlanId } from './enums.ts';
import { UserRef } from './user.ts';

const AccountUpdateInput = builder.inputType('AccountUpdateInput', {
  description: 'What the admin changes on an account; send only what changes',
  fields: (t) => ({
    plan: t.field({ type: PlanId }),
    disabled: t.boolean({ description: 'true disables the account at once; false enables it' }),
  }),
});

builder.queryFields((t) => ({
  accounts: t.field({
    type: [UserRef],
    description: 'Every account, oldest first (the admin only)',
    errors: { types: [ForbiddenError] },
    resolve: (_root, _args, ctx) => listAccounts(requireActor(ctx).user),
  }),
}));

builder.mutationFields((t) => ({
  updateAccount: t.field({
    type: UserRef,
    description: "Sets an account's plan, or disables or enables it (the admin only)",
    errors: { types: [ValidationError, NotFoundError, ForbiddenError] },
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: AccountUpdateInput, required: true }) },
    resolve: (_root, { id, input }, ctx) =>
      updateAccount(requireActor(ctx).user, String(id), {
        ...(input.plan != null && { plan: input.plan }),
        ...(input.disabled != null && { disabled: input.disabled }),
      }),
  }),
}));
