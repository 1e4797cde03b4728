import { ValidationError } from '../../domain/errors.ts';
import {
  accountWebhookOf,
  type Delivery,
  listDeliveries,
  rotateSigningSecret,
  setAccountWebhook,
  signingSecretOf,
} from '../../domain/webhooks.ts';
import { builder } from '../builder.ts';
import { countRows, requireActor } from '../context.ts';

type AlertSettings = { userId: string; defaultWebhook: string | null };

const SpendingAlertSettingsRef = builder.objectRef<AlertSettings>('SpendingAlertSettings').implement({
  description: "Where the account's spending alerts go, and the secret they are signed with",
  fields: (t) => ({
    defaultWebhook: t.exposeString('defaultWebhook', {
      nullable: true,
      description: 'Where alerts of gates without a spendingAlertWebhook of their own go; null: nowhere',
    }),
    signingSecret: t.string({
      description:
        'The key of the x-gatehouse-signature header: sha256= and the HMAC-SHA256 of "<x-gatehouse-timestamp>.<body>" in hex',
      resolve: (s) => signingSecretOf(s.userId),
    }),
  }),
});

const DeliveryStatus = builder.enumType('SpendingAlertDeliveryStatus', {
  values: {
    DELIVERED: { value: 'delivered', description: 'A 2xx answer came back' },
    PENDING: { value: 'pending', description: 'An attempt is due (a retry after a failure, or the first)' },
    FAILED: { value: 'failed', description: 'Every attempt was made; none was answered with a 2xx' },
  } as const,
});

const DeliveryRef = builder.objectRef<Delivery>('SpendingAlertDelivery').implement({
  description: 'A spending alert sent (or being sent) to a webhook, with its attempts',
  fields: (t) => ({
    id: t.exposeID('id'),
    gateId: t.exposeID('gateId'),
    gateName: t.exposeString('gateName', { nullable: true, description: 'null once the gate is deleted' }),
    url: t.exposeString('url'),
    payload: t.exposeString('payload', { description: 'The JSON body, exactly as signed and sent' }),
    status: t.field({ type: DeliveryStatus, resolve: (d) => d.status }),
    attempts: t.exposeInt('attempts'),
    lastStatus: t.exposeInt('lastStatus', { nullable: true, description: "The last attempt's HTTP status" }),
    lastError: t.exposeString('lastError', { nullable: true }),
    nextAttemptAt: t.expose('nextAttemptAt', { type: 'DateTime', nullable: true }),
    deliveredAt: t.expose('deliveredAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.queryFields((t) => ({
  spendingAlertSettings: t.field({
    type: SpendingAlertSettingsRef,
    resolve: async (_root, _args, ctx) => {
      const userId = requireActor(ctx).user.id;
      return { userId, defaultWebhook: await accountWebhookOf(userId) };
    },
  }),
  spendingAlertDeliveries: t.field({
    type: [DeliveryRef],
    description: 'Spending alerts sent to webhooks, newest first; gateId keeps one gate’s',
    args: { gateId: t.arg.id(), first: t.arg.int({ description: '1 to 200; 50 when not given' }) },
    resolve: (_root, args, ctx) => {
      const userId = requireActor(ctx).user.id;
      const first = Math.min(Math.max(args.first ?? 50, 1), 200);
      countRows(ctx, first);
      return listDeliveries(userId, { gateId: args.gateId ?? null, limit: first });
    },
  }),
}));

builder.mutationFields((t) => ({
  setSpendingAlertWebhook: t.field({
    type: SpendingAlertSettingsRef,
    description: "Sets the account's default webhook for spending alerts (null clears it)",
    errors: { types: [ValidationError] },
    args: { url: t.arg.string() },
    resolve: async (_root, args, ctx) => {
      const userId = requireActor(ctx).user.id;
      return { userId, defaultWebhook: await setAccountWebhook(userId, { url: args.url ?? null }) };
    },
  }),
  rotateWebhookSigningSecret: t.field({
    type: SpendingAlertSettingsRef,
    description: 'A new signing secret; every delivery from now on, retries included, is signed with it',
    resolve: async (_root, _args, ctx) => {
      const userId = requireActor(ctx).user.id;
      await rotateSigningSecret(userId);
      return { userId, defaultWebhook: await accountWebhookOf(userId) };
    },
  }),
}));
