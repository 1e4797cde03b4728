import { PLAN_IDS, type PlanId } from '@gatehouse/rules/account';
import { useMemo, useState } from 'react';
import { useForm } from 'react-hook-form';
import { useMutation, useQuery } from 'urql';
import { sentence, showMutationErrors } from '../forms/formErrors.ts';
import { MutationErrorFields } from '../forms/mutationErrors.ts';
import { graphql, type ResultOf } from '../graphql.ts';
import { toEnum } from '../graphqlEnums.ts';
import { formatUtc } from '../logs/format.ts';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { TableWrap } from '../ui/TableWrap.tsx';

const AccountsQuery = graphql(`
  query Accounts {
    accounts {
      __typename
      ... on QueryAccountsSuccess {
        data {
          id
          email
          createdAt
          isAdmin
          disabled
          disabledAt
          gateCount
          plan {
            id
            name
          }
        }
      }
      ... on Error {
        message
      }
    }
  }
`);

const UpdateAccountMutation = graphql(
  `
  mutation UpdateAccount($id: ID!, $input: AccountUpdateInput!) {
    updateAccount(id: $id, input: $input) {
      __typename
      ... on MutationUpdateAccountSuccess {
        data {
          id
          disabled
          disabledAt
          plan {
            id
            name
          }
        }
      }
      ...MutationErrorFields
    }
  }
`,
  [MutationErrorFields],
);

type AccountRow = Extract<
  ResultOf<typeof AccountsQuery>['accounts'],
  { __typename: 'QueryAccountsSuccess' }
>['data'][number];
type AccountInput = { plan?: PlanId; disabled?: boolean };
/** Sends a row's change: the mutation's outcome, or what to show when there was no answer. */
type Update = (
  id: string,
  input: AccountInput,
) => Promise<ResultOf<typeof UpdateAccountMutation>['updateAccount'] | string>;

/**
 * The admin's view of every account on this Gatehouse: its plan, which the admin sets, and whether
 * it is disabled (its sessions and keys refused at once, its data kept). Shown to the admin only.
 */
export function AccountsCard({ planNames }: { planNames: Record<string, string> }) {
  // An account's change names the User type: the list is asked again after it.
  const context = useMemo(() => ({ additionalTypenames: ['User'] }), []);
  const [{ data, fetching, error }, refetch] = useQuery({
    query: AccountsQuery,
    context,
    requestPolicy: 'cache-and-network',
  });
  const [, updateAccount] = useMutation(UpdateAccountMutation);

  const update: Update = async (id, input) => {
    const result = await updateAccount(
      { id, input: { disabled: input.disabled, plan: input.plan && toEnum(input.plan) } },
      context,
    );
    return (
      result.data?.updateAccount ?? result.error?.message ?? 'The account could not be changed; try again.'
    );
  };

  const accounts = data?.accounts;
  return (
    <section className="card" aria-labelledby="accounts-title">
      <p className="eyebrow">Admin</p>
      <h2 id="accounts-title">Accounts</h2>
      <p className="muted small">
        Every account on this Gatehouse. A plan change applies at once; a disabled account's sessions and API
        keys are refused (401) at once, and its gates and logs are kept until you enable it again.
      </p>
      {error && !data && (
        <ErrorBanner error={error} onRetry={() => refetch({ requestPolicy: 'network-only' })} />
      )}
      {!data && fetching && <Loading what="accounts" />}
      {accounts && accounts.__typename !== 'QueryAccountsSuccess' && (
        <p className="banner error" role="alert">
          {'message' in accounts ? accounts.message : 'The accounts could not be read.'}
        </p>
      )}
      {accounts?.__typename === 'QueryAccountsSuccess' && (
        <TableWrap label="Accounts">
          <table className="table">
            <thead>
              <tr>
                <th>Email</th>
                <th>Plan</th>
                <th>Gates</th>
                <th>Created</th>
                <th>Status</th>
                <th>
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {accounts.data.map((account) => (
                <AccountTableRow key={account.id} account={account} planNames={planNames} update={update} />
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}

function AccountTableRow({
  account,
  planNames,
  update,
}: {
  account: AccountRow;
  planNames: Record<string, string>;
  update: Update;
}) {
  const plan = PLAN_IDS.find((id) => id === account.plan.id) ?? 'free';
  const form = useForm<{ plan: PlanId }>({ values: { plan } });
  const [busy, setBusy] = useState(false);
  const problem = form.formState.errors.plan?.message ?? form.formState.errors.root?.server?.message;

  const change = async (input: AccountInput) => {
    form.clearErrors();
    setBusy(true);
    const outcome = await update(account.id, input);
    setBusy(false);
    if (typeof outcome !== 'string' && outcome.__typename === 'MutationUpdateAccountSuccess') return;
    if (input.plan) form.setValue('plan', plan); // the select shows the plan that holds
    showMutationErrors(form, typeof outcome === 'string' ? undefined : outcome, {
      fieldOf: (issue) =>
        issue.path === 'plan' ? { field: 'plan', message: sentence(issue.message) } : null,
      unanswered: typeof outcome === 'string' ? outcome : 'The account could not be changed; try again.',
    });
  };

  const label = `Plan of ${account.email}`;
  return (
    <>
      <tr className={account.disabled ? 'revoked' : undefined}>
        <td data-label="Email" className="strong key-name">
          {account.email}
          {account.isAdmin && (
            <span className="plan-mark">
              <span className="badge ok">admin</span>
            </span>
          )}
        </td>
        <td data-label="Plan">
          <select
            aria-label={label}
            aria-invalid={problem ? true : undefined}
            disabled={busy || account.isAdmin}
            title={account.isAdmin ? "The admin's account stays on Enterprise" : undefined}
            {...form.register('plan', {
              onChange: (event: { target: { value: string } }) =>
                change({ plan: event.target.value as PlanId }),
            })}
          >
            {PLAN_IDS.map((id) => (
              <option key={id} value={id}>
                {planNames[id] ?? id}
              </option>
            ))}
          </select>
        </td>
        <td data-label="Gates">{account.gateCount}</td>
        <td data-label="Created">{formatUtc(account.createdAt)}</td>
        <td data-label="Status">
          {account.disabled ? (
            <>
              <span className="badge danger">disabled</span>
              {account.disabledAt && <div className="muted small">{formatUtc(account.disabledAt)}</div>}
            </>
          ) : (
            <span className="badge ok">active</span>
          )}
        </td>
        <td className="row-actions">
          {!account.isAdmin && (
            <button
              type="button"
              className={account.disabled ? 'button subtle' : 'button danger'}
              disabled={busy}
              onClick={() => change({ disabled: !account.disabled })}
            >
              {account.disabled ? 'Enable' : 'Disable'}
              <span className="sr-only"> {account.email}</span>
            </button>
          )}
        </td>
      </tr>
      {problem && (
        <tr className="confirm-row">
          <td colSpan={6}>
            <p className="field-error" role="alert">
              {problem}
            </p>
          </td>
        </tr>
      )}
    </>
  );
}
