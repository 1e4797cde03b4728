import {
  createApiKey,
  type IssuedApiKey,
  listApiKeys,
  revokeApiKey,
  updateApiKey,
} from '../../domain/apiKeys.ts';
import { NotFoundError, ValidationError } from '../../domain/errors.ts';
import { builder } from '../builder.ts';
import { requireActor } from '../context.ts';

export const ApiKeyRef = builder.prismaObject('ApiKey', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    prefix: t.exposeString('prefix', { description: 'The first characters of the key, to recognise it' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
    rateLimitRpm: t.exposeInt('rateLimitRpm', {
      nullable: true,
      description: "Requests per minute with this key, beside each gate's own limit; null is no limit",
    }),
    rateLimitTpm: t.exposeInt('rateLimitTpm', {
      nullable: true,
      description: "Tokens per minute with this key, beside each gate's own limit; null is no limit",
    }),
  }),
});

/** A key's settings; on update, send only what changes (null lifts a limit). */
const ApiKeyInput = builder.inputType('ApiKeyInput', {
  fields: (t) => ({
    name: t.string(),
    rateLimitRpm: t.int(),
    rateLimitTpm: t.int(),
  }),
});

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
    },
    resolve: (_root, args, ctx) => createApiKey(requireActor(ctx).user.id, args),
  }),
  updateApiKey: t.field({
    type: ApiKeyRef,
    errors: { types: [ValidationError, NotFoundError] },
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: ApiKeyInput, required: true }) },
    resolve: (_root, { id, input }, ctx) => updateApiKey(requireActor(ctx).user.id, String(id), input),
  }),
  revokeApiKey: t.field({
    type: ApiKeyRef,
    errors: { types: [NotFoundError] },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => revokeApiKey(requireActor(ctx).user.id, String(args.id)),
  }),
}));
