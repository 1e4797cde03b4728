import { TASK_TYPES, type TaskType } from '@gatehouse/rules/gate';
import { GraphQLError } from 'graphql';
import { type CatalogModel, listModels } from '../../domain/catalog.ts';
import { builder } from '../builder.ts';
import { requireActor } from '../context.ts';

const ModelRef = builder.objectRef<CatalogModel>('Model').implement({
  description: 'A model from the catalog that gates may name',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'provider/model, as gates name it' }),
    provider: t.exposeString('provider'),
    name: t.exposeString('name'),
    taskTypes: t.exposeStringList('taskTypes'),
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
      taskType: t.arg.string({ description: `One of: ${TASK_TYPES.join(', ')}` }),
      provider: t.arg.string(),
    },
    resolve: (_root, args, ctx) => {
      requireActor(ctx);
      if (args.taskType && !(TASK_TYPES as readonly string[]).includes(args.taskType)) {
        throw new GraphQLError(`taskType must be one of ${TASK_TYPES.join(', ')}`, {
          extensions: { code: 'BAD_USER_INPUT' },
        });
      }
      return listModels({
        ...(args.taskType && { taskType: args.taskType as TaskType }),
        ...(args.provider && { provider: args.provider }),
      });
    },
  }),
);
