/** Spending alerts sent to webhooks, with each one's status and attempts: the account's, or one gate's. */
import { useQuery } from 'urql';
import { graphql, type ResultOf } from '../graphql.ts';
import { formatUtc } from '../logs/format.ts';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { TableWrap } from '../ui/TableWrap.tsx';

export const AlertDeliveriesQuery = graphql(`
  query AlertDeliveries($gateId: ID) {
    spendingAlertDeliveries(gateId: $gateId, first: 50) {
      id
      gateId
      gateName
      url
      status
      attempts
      lastStatus
      lastError
      nextAttemptAt
      deliveredAt
      createdAt
    }
  }
`);

type Delivery = ResultOf<typeof AlertDeliveriesQuery>['spendingAlertDeliveries'][number];

const statusBadge: Record<Delivery['status'], { label: string; tone: string }> = {
  DELIVERED: { label: 'delivered', tone: 'ok' },
  PENDING: { label: 'retrying', tone: 'warning' },
  FAILED: { label: 'failed', tone: 'danger' },
};

function outcome(d: Delivery): string {
  if (d.status === 'DELIVERED' && d.deliveredAt) return `Delivered ${formatUtc(d.deliveredAt)}`;
  const last = d.lastError ?? (d.lastStatus === null ? 'not tried yet' : `HTTP ${d.lastStatus}`);
  if (d.status === 'PENDING') {
    return d.attempts === 0
      ? 'Not tried yet'
      : `${last}; next attempt ${d.nextAttemptAt ? formatUtc(d.nextAttemptAt) : 'soon'}`;
  }
  return `${last}; no attempt left`;
}

/** The deliveries, newest first; with `gateId`, that gate's only (and no gate column). */
export function AlertDeliveries({ gateId }: { gateId?: string }) {
  const [{ data, fetching, error }, refetch] = useQuery({
    query: AlertDeliveriesQuery,
    variables: { gateId: gateId ?? null },
    requestPolicy: 'cache-and-network',
  });
  const deliveries = data?.spendingAlertDeliveries;
  return (
    <section className="alert-deliveries" aria-labelledby="alert-deliveries-title">
      <h3 id="alert-deliveries-title">Alert deliveries</h3>
      {error && !data && (
        <ErrorBanner error={error} onRetry={() => refetch({ requestPolicy: 'network-only' })} />
      )}
      {!data && fetching && <Loading what="alert deliveries" />}
      {deliveries && deliveries.length === 0 && (
        <p className="muted small">
          No alert sent yet. One is sent to the webhook when an alert-only limit is crossed, once per period.
        </p>
      )}
      {deliveries && deliveries.length > 0 && (
        <TableWrap label="Alert deliveries">
          <table className="table">
            <thead>
              <tr>
                <th>Crossed</th>
                {!gateId && <th>Gate</th>}
                <th>Webhook</th>
                <th>Status</th>
                <th>Attempts</th>
                <th>Outcome</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((d) => (
                <tr key={d.id}>
                  <td>{formatUtc(d.createdAt)}</td>
                  {!gateId && <td>{d.gateName ?? 'deleted gate'}</td>}
                  <td className="mono small">{d.url}</td>
                  <td>
                    <span className={`badge ${statusBadge[d.status].tone}`}>
                      {statusBadge[d.status].label}
                    </span>
                  </td>
                  <td>{d.attempts}</td>
                  <td className="small">{outcome(d)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}
