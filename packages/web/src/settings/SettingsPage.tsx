import { useQuery } from 'urql';
import { Link } from 'wouter';
import { graphql, type ResultOf } from '../graphql.ts';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { useTitle } from '../ui/useTitle.ts';
import { AccountsCard } from './AccountsCard.tsx';
import { SpendingAlertsCard } from './SpendingAlertsCard.tsx';

const SettingsQuery = graphql(`
  query Settings {
    me {
      id
      email
      createdAt
      gateCount
      isAdmin
      plan {
        id
        name
        maxGates
        logRetentionDays
      }
    }
    plans {
      id
      name
      maxGates
      logRetentionDays
    }
  }
`);

type Plan = ResultOf<typeof SettingsQuery>['plans'][number];

const day = new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeZone: 'UTC' });

/** The account and its plan: gates used against the plan's limit, and how long logs are kept. */
export function SettingsPage() {
  useTitle('Settings');
  // Gate counts change on other pages: ask the server each time the page opens.
  const [{ data, fetching, error }, refetch] = useQuery({
    query: SettingsQuery,
    requestPolicy: 'cache-and-network',
  });

  return (
    <section className="page narrow">
      <h1>Settings</h1>
      <p className="muted">
        Your account, your plan and what it allows; the admin also manages every account.
      </p>
      {error && !data && (
        <ErrorBanner error={error} onRetry={() => refetch({ requestPolicy: 'network-only' })} />
      )}
      {!data && fetching && <Loading what="settings" />}
      {data?.me && (
        <div className="cards">
          <section className="card" aria-labelledby="plan-title">
            <p className="eyebrow">Plan</p>
            <h2 id="plan-title" className="plan-name">
              {data.me.plan.name}
            </h2>
            <GateUsage used={data.me.gateCount} max={data.me.plan.maxGates} />
            <dl className="summary-list">
              <div>
                <dt>Log retention</dt>
                <dd>
                  {data.me.plan.logRetentionDays} days
                  <span className="muted small"> · older log entries and their payloads are deleted</span>
                </dd>
              </div>
            </dl>
          </section>

          <section className="card" aria-labelledby="account-title">
            <p className="eyebrow">Account</p>
            <h2 id="account-title">Signed in as</h2>
            <dl className="summary-list">
              <div>
                <dt>Email</dt>
                <dd>{data.me.email}</dd>
              </div>
              <div>
                <dt>Member since</dt>
                <dd>{day.format(new Date(data.me.createdAt))}</dd>
              </div>
            </dl>
            <p className="muted small">
              Applications authenticate with API keys: <Link href="/api-keys">manage your keys</Link>.
            </p>
          </section>

          <PlansCard plans={data.plans} currentId={data.me.plan.id} />

          <SpendingAlertsCard />

          {data.me.isAdmin && (
            <AccountsCard planNames={Object.fromEntries(data.plans.map((plan) => [plan.id, plan.name]))} />
          )}
        </div>
      )}
    </section>
  );
}

/** Every plan, what it allows, and which one is the account's. */
function PlansCard({ plans, currentId }: { plans: Plan[]; currentId: string }) {
  return (
    <section className="card" aria-labelledby="plans-title">
      <h2 id="plans-title">Plans</h2>
      <table className="table plans-table">
        <thead>
          <tr>
            <th>Plan</th>
            <th>Gates</th>
            <th>Log retention</th>
          </tr>
        </thead>
        <tbody>
          {plans.map((plan) => (
            <tr key={plan.id} className={plan.id === currentId ? 'current' : undefined}>
              <td data-label="Plan">
                {plan.name}
                {plan.id === currentId && (
                  <span className="plan-mark">
                    <span className="badge ok">your plan</span>
                  </span>
                )}
              </td>
              <td data-label="Gates">{plan.maxGates ?? 'No limit'}</td>
              <td data-label="Log retention">{plan.logRetentionDays} days</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** Gates used against the plan's limit, as a bar that warns near the limit. */
function GateUsage({ used, max }: { used: number; max: number | null }) {
  if (max === null) {
    return (
      <p className="usage-text">
        <strong>{used}</strong> {used === 1 ? 'gate' : 'gates'} · no gate limit on this plan
      </p>
    );
  }
  const share = max === 0 ? 1 : Math.min(used / max, 1);
  const level = used >= max ? 'full' : share >= 0.8 ? 'near' : 'fine';
  return (
    <div className="usage">
      <div className="usage-text">
        <span>Gates</span>
        <span>
          <strong>{used}</strong> of {max} used
        </span>
      </div>
      <div
        className={`usage-bar ${level}`}
        role="progressbar"
        aria-label="Gates used"
        aria-valuemin={0}
        aria-valuemax={max}
        aria-valuenow={used}
        aria-valuetext={`${used} of ${max} gates`}
      >
        <div style={{ width: `${share * 100}%` }} />
      </div>
      {level === 'full' && (
        <p className="field-error">
          The plan's limit is reached: creating another gate is refused until you delete one.
        </p>
      )}
      {level === 'near' && <p className="hint">{max - used} left on this plan.</p>}
    </div>
  );
}
