import { createApiKey, type IssuedApiKey, listApiKeys, revokeApiKey } from '../../domain/apiKeys.ts';
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
    args: { name: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => createApiKey(requireActor(ctx).user.id, args),
  }),
  revokeApiKey: t.field({
    type: ApiKeyRef,
    errors: { types: [NotFoundError] },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => revokeApiKey(requireActor(ctx).user.id, String(args.id)),
  }),
}));
