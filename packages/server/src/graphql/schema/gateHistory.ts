/**
 * Gate history in GraphQL (issue 14): Gate.history, a gate's versions newest first with what each
 * changed, and the rollbackGate mutation. The same domain functions as REST.
 */
import {
  ConflictError,
  NotFoundError,
  ServiceUnavailableError,
  ValidationError,
} from '../../domain/errors.ts';
import { type GateVersionEntry, gateHistory, rollbackGate } from '../../domain/gateHistory.ts';
import { forwardConnection, userInput } from '../arguments.ts';
import { builder } from '../builder.ts';
import { countRows, requireActor } from '../context.ts';
import { GateChangedBy } from './enums.ts';
import { GateRef } from './gate.ts';

type FieldChange = { field: string; from: unknown; to: unknown };

const GateFieldChangeRef = builder.objectRef<FieldChange>('GateFieldChange').implement({
  description: 'One setting a version changed: its value before (the previous version’s) and after',
  fields: (t) => ({
    field: t.exposeString('field', { description: 'The setting’s name, as in GateInput' }),
    from: t.field({ type: 'JSON', nullable: true, resolve: (c) => c.from ?? null }),
    to: t.field({ type: 'JSON', nullable: true, resolve: (c) => c.to ?? null }),
  }),
});

const GateVersionRef = builder.objectRef<GateVersionEntry>('GateVersion').implement({
  description: 'One change of a gate’s settings: version 1 is its creation',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'What rollbackGate takes' }),
    version: t.exposeInt('version'),
    changedBy: t.expose('changedBy', { type: GateChangedBy }),
    actorId: t.id({
      nullable: true,
      description: 'Who made a user change or a rollback; null for the Architect',
      resolve: (v) => v.actor?.id ?? null,
    }),
    actorEmail: t.string({ nullable: true, resolve: (v) => v.actor?.email ?? null }),
    rolledBackToId: t.id({
      nullable: true,
      description: 'The version a rollback restored',
      resolve: (v) => v.rolledBackTo?.id ?? null,
    }),
    rolledBackToVersion: t.int({ nullable: true, resolve: (v) => v.rolledBackTo?.version ?? null }),
    changedFields: t.exposeStringList('changedFields'),
    changes: t.field({
      type: [GateFieldChangeRef],
      resolve: (v) =>
        v.changedFields.map((field) => ({ field, from: v.changes[field]?.from, to: v.changes[field]?.to })),
    }),
    settings: t.field({
      type: 'JSON',
      description: 'Every setting after this change, as REST shows a gate’s',
      resolve: (v) => v.settings,
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.objectFields(GateRef, (t) => ({
  history: t.connection({
    type: GateVersionRef,
    description: 'The gate’s versions, newest first',
    resolve: (g, args, ctx) =>
      userInput(async () => {
        if (args.last != null || args.before != null) {
          throw new ValidationError([
            { path: 'last', message: 'paging backwards is not supported; use first and after' },
          ]);
        }
        countRows(ctx, args.first ?? 50);
        const page = await gateHistory(requireActor(ctx).user.id, g.id, {
          ...(args.first != null && { limit: args.first }),
          ...(args.after && { cursor: args.after }),
        });
        return forwardConnection(page, (node) => node.id, args.after);
      }),
  }),
}));

builder.mutationFields((t) => ({
  rollbackGate: t.field({
    type: GateRef,
    description:
      'Restores the settings of one of the gate’s versions, as a new version; refused, changing nothing, when the rules refuse them today',
    errors: { types: [ValidationError, ConflictError, NotFoundError, ServiceUnavailableError] },
    args: { id: t.arg.id({ required: true }), versionId: t.arg.id({ required: true }) },
    resolve: (_root, { id, versionId }, ctx) =>
      rollbackGate(requireActor(ctx).user.id, String(id), String(versionId), ctx),
  }),
}));
