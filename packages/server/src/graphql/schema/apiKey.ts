import {
  apiKeyState,
  createApiKey,
  type IssuedApiKey,
  listApiKeys,
  revokeApiKey,
  rollApiKey,
  updateApiKey,
} from '../../domain/apiKeys.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.ts';
import { builder } from '../builder.ts';
import { requireActor } from '../context.ts';
import { KeySpendingPeriod, SpendingEnforcement, SpendingStatus, TaskType } from './enums.ts';

export const ApiKeyRef = builder.prismaObject('ApiKey', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    prefix: t.exposeString('prefix', { description: 'The first characters of the key, to recognise it' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
    expiresAt: t.expose('expiresAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the key stops working (its requests then get 401 key_expired); null: never',
    }),
    previousKeyExpiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'Until when the secret replaced by the last roll still works; null: it does not',
      resolve: (k) => apiKeyState(k).previousKeyExpiresAt,
    }),
    rateLimitRpm: t.exposeInt('rateLimitRpm', {
      nullable: true,
      description: "Requests per minute with this key, beside each gate's own limit; null is no limit",
    }),
    rateLimitTpm: t.exposeInt('rateLimitTpm', {
      nullable: true,
      description: "Tokens per minute with this key, beside each gate's own limit; null is no limit",
    }),
    spendingLimit: t.float({
      nullable: true,
      description: "What the key may spend per period, beside each gate's own limit; null is no limit",
      resolve: (k) => apiKeyState(k).spendingLimit,
    }),
    spendingLimitPeriod: t.expose('spendingLimitPeriod', { type: KeySpendingPeriod }),
    spendingEnforcement: t.expose('spendingEnforcement', { type: SpendingEnforcement }),
    spendingCurrent: t.float({
      description: 'What the key has spent this period (over its life, for TOTAL)',
      resolve: (k, _args, ctx) => apiKeyState(k, ctx.spending).spendingCurrent,
    }),
    spendingResetsAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When spendingCurrent starts again at zero; null for TOTAL',
      resolve: (k, _args, ctx) => apiKeyState(k, ctx.spending).spendingResetsAt,
    }),
    spendingStatus: t.field({
      type: SpendingStatus,
      resolve: (k, _args, ctx) => apiKeyState(k, ctx.spending).spendingStatus,
    }),
    allowedGates: t.field({
      type: ['ID'],
      description: "The account's gates the key may use; empty: all of them",
      resolve: (k) => k.allowedGates,
    }),
    allowedTaskTypes: t.field({
      type: [TaskType],
      description: 'The task types the key may use; empty: all of them',
      resolve: (k) => k.allowedTaskTypes,
    }),
    metadata: t.field({
      type: 'JSON',
      description: 'Your own notes on the key: string keys, scalar values',
      resolve: (k) => apiKeyState(k).metadata,
    }),
  }),
});

/** A key's settings; on update, send only what changes (null lifts a limit or an expiry). */
const ApiKeyInput = builder.inputType('ApiKeyInput', {
  fields: (t) => ({
    name: t.string(),
    rateLimitRpm: t.int(),
    rateLimitTpm: t.int(),
    spendingLimit: t.float(),
    spendingLimitPeriod: t.field({ type: KeySpendingPeriod }),
    spendingEnforcement: t.field({ type: SpendingEnforcement }),
    allowedGates: t.idList({ description: 'Gates of yours the key may use; empty: all' }),
    allowedTaskTypes: t.field({ type: [TaskType], description: 'Task types the key may use; empty: all' }),
    expiresAt: t.field({ type: 'DateTime', description: 'A future time, or null: never' }),
    metadata: t.field({ type: 'JSON', description: 'String keys, scalar values (at most 64 pairs)' }),
  }),
});

/** The input as the rules read it: times as ISO text, as REST takes them. */
const settingsOf = (input: Record<string, unknown>) =>
  input.expiresAt instanceof Date ? { ...input, expiresAt: input.expiresAt.toISOString() } : input;

export const CreatedApiKeyRef = builder.objectRef<IssuedApiKey>('CreatedApiKey').implement({
  fields: (t) => ({
    apiKey: t.field({ type: ApiKeyRef, resolve: (k) => k.apiKey }),
    key: t.exposeString('key', { description: 'The secret; shown this once and never again' }),
  }),
});

builder.queryField('apiKeys', (t) =>
  t.field({
    type: [ApiKeyRef],
    resolve: (_root, _args, ctx) => listApiKeys(requireActor(ctx).user.id),
  }),
);

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: CreatedApiKeyRef,
    errors: { types: [ValidationError] },
    args: {
      name: t.arg.string({ required: true }),
      rateLimitRpm: t.arg.int(),
      rateLimitTpm: t.arg.int(),
      input: t.arg({
        type: ApiKeyInput,
        description: 'The rest of its settings (name and limits above win)',
      }),
    },
    resolve: (_root, { input, ...args }, ctx) =>
      createApiKey(requireActor(ctx).user.id, settingsOf({ ...input, ...args })),
  }),
  updateApiKey: t.field({
    type: ApiKeyRef,
    errors: { types: [ValidationError, NotFoundError] },
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: ApiKeyInput, required: true }) },
    resolve: (_root, { id, input }, ctx) =>
      updateApiKey(requireActor(ctx).user.id, String(id), settingsOf(input)),
  }),
  rollApiKey: t.field({
    type: CreatedApiKeyRef,
    description: 'A new secret for the same key; the old one keeps working for graceSeconds (0 to 86400)',
    errors: { types: [ValidationError, NotFoundError, ConflictError] },
    args: { id: t.arg.id({ required: true }), graceSeconds: t.arg.int({ required: true }) },
    resolve: (_root, { id, graceSeconds }, ctx) =>
      rollApiKey(requireActor(ctx).user.id, String(id), { graceSeconds }),
  }),
  revokeApiKey: t.field({
    type: ApiKeyRef,
    errors: { types: [NotFoundError] },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => revokeApiKey(requireActor(ctx).user.id, String(args.id)),
  }),
}));
