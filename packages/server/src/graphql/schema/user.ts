import { prisma } from '../../db/client.ts';
import type { SessionGrant } from '../../domain/accounts.ts';
import { noAccountYet, registerAccount, signIn, signOut, signupOpen } from '../../domain/accounts.ts';
import {
  ConflictError,
  ForbiddenError,
  RateLimitedError,
  ServiceUnavailableError,
  UnauthorizedError,
  ValidationError,
} from '../../domain/errors.ts';
import { PLANS, type Plan, planOf } from '../../domain/plans.ts';
import { clearedSessionCookies, sessionCookies } from '../../http/session.ts';
import { builder } from '../builder.ts';
import { refuseForgedRequest } from '../context.ts';
import { CreatedApiKeyRef } from './apiKey.ts';

export const PlanRef = builder.objectRef<Plan>('Plan').implement({
  fields: (t) => ({
    id: t.exposeString('id'),
    name: t.exposeString('name'),
    maxGates: t.exposeInt('maxGates', { nullable: true, description: 'null: no limit' }),
    logRetentionDays: t.exposeInt('logRetentionDays'),
  }),
});

export const UserRef = builder.prismaObject('User', {
  fields: (t) => ({
    id: t.exposeID('id'),
    email: t.exposeString('email'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    plan: t.field({ type: PlanRef, resolve: (user) => planOf(user.plan) }),
    gateCount: t.relationCount('gates'),
    isAdmin: t.exposeBoolean('isAdmin', {
      description: "The instance's admin (the first account): manages every account",
    }),
    disabled: t.boolean({
      description: 'A disabled account is refused sign-in, sessions and API keys; its data stays',
      resolve: (user) => user.disabledAt !== null,
    }),
    disabledAt: t.expose('disabledAt', { type: 'DateTime', nullable: true }),
  }),
});

const SessionRef = builder.objectRef<SessionGrant>('Session').implement({
  description: 'A signed-in dashboard session; the cookie carries the secret part',
  fields: (t) => ({
    user: t.field({ type: UserRef, resolve: (g) => g.user }),
    csrfToken: t.exposeString('csrfToken', {
      description: 'Send it back in the x-csrf-token header with every GraphQL request',
    }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
  }),
});

const SignUpPayload = builder
  .objectRef<{ grant: SessionGrant; issued: { apiKey: unknown; key: string } }>('SignUpPayload')
  .implement({
    fields: (t) => ({
      session: t.field({ type: SessionRef, resolve: (p) => p.grant }),
      apiKey: t.field({
        type: CreatedApiKeyRef,
        description: 'The first API key; its secret is shown this once',
        resolve: (p) => p.issued as never,
      }),
    }),
  });

const CredentialsInput = builder.inputType('CredentialsInput', {
  fields: (t) => ({
    email: t.string({ required: true }),
    password: t.string({ required: true }),
  }),
});

builder.queryFields((t) => ({
  me: t.prismaField({
    type: 'User',
    nullable: true,
    description: 'The signed-in user, or null',
    resolve: (query, _root, _args, ctx) =>
      ctx.actor ? prisma.user.findUnique({ ...query, where: { id: ctx.actor.user.id } }) : null,
  }),
  signupOpen: t.boolean({
    description: 'Whether sign-up is possible now (first account, or open sign-up)',
    resolve: (_root, _args, ctx) => signupOpen(ctx.config),
  }),
  firstAccount: t.boolean({
    description: 'No account exists yet: whoever signs up now administers this Gatehouse',
    resolve: () => noAccountYet(),
  }),
  plans: t.field({ type: [PlanRef], resolve: () => Object.values(PLANS) }),
}));

builder.mutationFields((t) => ({
  signUp: t.field({
    type: SignUpPayload,
    errors: {
      types: [ValidationError, ConflictError, ForbiddenError, RateLimitedError, ServiceUnavailableError],
    },
    args: { input: t.arg({ type: CredentialsInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const result = await registerAccount(input, ctx.config, { address: ctx.clientAddress });
      ctx.cookies.push(...sessionCookies(result.grant, ctx.config));
      return result;
    },
  }),
  signIn: t.field({
    type: SessionRef,
    errors: { types: [ValidationError, UnauthorizedError, RateLimitedError] },
    args: { input: t.arg({ type: CredentialsInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const grant = await signIn(input, ctx.config, { address: ctx.clientAddress });
      ctx.cookies.push(...sessionCookies(grant, ctx.config));
      return grant;
    },
  }),
  signOut: t.boolean({
    description: 'Ends the session; a cookie without its x-csrf-token header is refused (FORBIDDEN)',
    resolve: async (_root, _args, ctx) => {
      refuseForgedRequest(ctx);
      if (ctx.actor?.sessionToken) await signOut(ctx.actor.sessionToken);
      ctx.cookies.push(...clearedSessionCookies(ctx.config));
      return true;
    },
  }),
}));
