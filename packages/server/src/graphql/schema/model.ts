import {
  type CatalogModel,
  listModels,
  type ProviderStatus,
  providerStatuses,
  type UnitPrice,
  unitPriceOf,
} from '../../domain/catalog.ts';
import { builder } from '../builder.ts';
import { requireActor } from '../context.ts';
import { TaskType } from './enums.ts';

const UnitPriceRef = builder.objectRef<UnitPrice>('ModelUnitPrice').implement({
  description: 'What a media model is priced by instead of tokens',
  fields: (t) => ({
    usd: t.exposeFloat('usd', {
      description: 'USD per unit (per image: the lowest of its sizes and qualities)',
    }),
    per: t.exposeString('per', {
      description: 'The unit: image, 1M characters, minute, second or page',
    }),
  }),
});

const ProviderRef = builder.objectRef<ProviderStatus>('Provider').implement({
  description: 'A provider models come from, and whether this server can call it',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'The prefix of its model ids (openai in openai/gpt-4o)' }),
    name: t.exposeString('name'),
    configured: t.exposeBoolean('configured', {
      description: 'Whether its key (or a self-hosted server’s base URL) is set here; mock always is',
    }),
    envVariable: t.exposeString('envVariable', {
      nullable: true,
      description: 'The environment variable that configures it (its API key, or base URL); null for mock',
    }),
  }),
});

const ModelRef = builder.objectRef<CatalogModel>('Model').implement({
  description: 'A model from the catalog that gates may name',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'provider/model, as gates name it' }),
    provider: t.exposeString('provider'),
    name: t.exposeString('name'),
    taskTypes: t.expose('taskTypes', { type: [TaskType] }),
    inputPricePerMTok: t.exposeFloat('inputPricePerMTok', { nullable: true }),
    outputPricePerMTok: t.exposeFloat('outputPricePerMTok', { nullable: true }),
    contextWindow: t.exposeInt('contextWindow', { nullable: true }),
    deprecated: t.exposeBoolean('deprecated'),
    unitPrice: t.field({
      type: UnitPriceRef,
      nullable: true,
      description: 'The price per image, character, minute, second or page, for a model not priced by tokens',
      resolve: (model) => unitPriceOf(model),
    }),
  }),
});

builder.queryField('models', (t) =>
  t.field({
    type: [ModelRef],
    args: {
      taskType: t.arg({ type: TaskType }),
      provider: t.arg.string(),
    },
    resolve: (_root, args, ctx) => {
      requireActor(ctx);
      return listModels({
        ...(args.taskType && { taskType: args.taskType }),
        ...(args.provider && { provider: args.provider }),
      });
    },
  }),
);

builder.queryField('providers', (t) =>
  t.field({
    type: [ProviderRef],
    description: 'Every provider, with whether it is configured on this server and what configures it',
    resolve: (_root, _args, ctx) => {
      requireActor(ctx);
      return providerStatuses(ctx.models.configured);
    },
  }),
);
