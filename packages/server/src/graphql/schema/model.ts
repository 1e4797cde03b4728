import { type CatalogModel, listModels } from '../../domain/catalog.ts';
import { builder } from '../builder.ts';
import { requireActor } from '../context.ts';
import { TaskType } from './enums.ts';

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
