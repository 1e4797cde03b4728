import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Client, fetchExchange, Provider } from 'urql';
import { describe, expect, it, vi } from 'vitest';
import { SettingsPage } from './SettingsPage.tsx';

const plans = [
  { __typename: 'Plan', id: 'free', name: 'Free', maxGates: 10, logRetentionDays: 30 },
  { __typename: 'Plan', id: 'pro', name: 'Pro', maxGates: 100, logRetentionDays: 90 },
  { __typename: 'Plan', id: 'enterprise', name: 'Enterprise', maxGates: null, logRetentionDays: 365 },
];

function me(isAdmin: boolean) {
  const plan = isAdmin ? plans[2] : plans[0];
  return {
    __typename: 'User',
    id: 'u-admin',
    email: isAdmin ? 'admin@example.test' : 'user@example.test',
    createdAt: '2026-11-01T10:00:00.000Z',
    gateCount: 2,
    isAdmin,
    plan,
  };
}

function account(id: string, email: string, overrides: Record<string, unknown> = {}) {
  return {
    __typename: 'User',
    id,
    email,
    createdAt: '2026-11-02T10:00:00.000Z',
    isAdmin: false,
    disabled: false,
    disabledAt: null,
    gateCount: 0,
    plan: { __typename: 'Plan', id: 'pro', name: 'Pro' },
    ...overrides,
  };
}

type Variables = Record<string, unknown>;

/** The GraphQL server as a test double behind urql's real client, answering by operation name. */
function fakeGraphQL(isAdmin: boolean, update: (variables: Variables) => Record<string, unknown>) {
  const sent: { operation: string; variables: Variables }[] = [];
  const accounts = [
    account('u-admin', 'admin@example.test', {
      isAdmin: true,
      plan: { __typename: 'Plan', id: 'enterprise', name: 'Enterprise' },
    }),
    account('u-bob', 'bob@example.test'),
  ];
  const fetch = vi.fn(async (_url: RequestInfo | URL, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body)) as { query: string; variables: Variables };
    const operation = /(?:query|mutation)\s+(\w+)/.exec(body.query)?.[1] ?? '';
    sent.push({ operation, variables: body.variables });
    const data =
      operation === 'Settings'
        ? { me: me(isAdmin), plans }
        : operation === 'Accounts'
          ? { accounts: { __typename: 'QueryAccountsSuccess', data: accounts } }
          : operation === 'UpdateAccount'
            ? { updateAccount: update(body.variables) }
            : operation === 'SpendingAlertSettings'
              ? {
                  spendingAlertSettings: {
                    __typename: 'SpendingAlertSettings',
                    defaultWebhook: null,
                    signingSecret: 'whsec_test',
                  },
                }
              : operation === 'AlertDeliveries'
                ? { spendingAlertDeliveries: [] }
                : null;
    return new Response(JSON.stringify(data ? { data } : { errors: [{ message: `no ${operation} here` }] }), {
      headers: { 'content-type': 'application/json' },
    });
  });
  const calls = (operation: string) => sent.filter((c) => c.operation === operation).map((c) => c.variables);
  return { fetch, calls };
}

function renderSettings(graphql: ReturnType<typeof fakeGraphQL>) {
  const client = new Client({
    url: 'http://gatehouse.test/graphql',
    exchanges: [fetchExchange],
    fetch: graphql.fetch as typeof fetch,
    preferGetMethod: false,
  });
  render(
    <Provider value={client}>
      <SettingsPage />
    </Provider>,
  );
}

const changed = (variables: Variables) => {
  const input = variables.input as { plan?: string; disabled?: boolean };
  return {
    __typename: 'MutationUpdateAccountSuccess',
    data: {
      __typename: 'User',
      id: variables.id,
      disabled: input.disabled ?? false,
      disabledAt: input.disabled ? '2026-11-03T10:00:00.000Z' : null,
      plan: { __typename: 'Plan', id: (input.plan ?? 'PRO').toLowerCase(), name: 'Changed' },
    },
  };
};

describe('the settings page for the admin', () => {
  it('lists every account, the admin’s own marked and not changeable', async () => {
    const graphql = fakeGraphQL(true, changed);
    renderSettings(graphql);
    const section = await screen.findByRole('region', { name: 'Accounts' });
    await within(section).findByRole('cell', { name: 'bob@example.test' });
    expect(within(section).getByText('admin')).toBeTruthy();
    expect(screen.getByLabelText<HTMLSelectElement>('Plan of admin@example.test').disabled).toBe(true);
    expect(screen.getByLabelText<HTMLSelectElement>('Plan of bob@example.test').value).toBe('pro');
    expect(within(section).queryByRole('button', { name: /admin@example\.test/ })).toBeNull();
  });

  it('sends a plan change as the GraphQL enum, and a disable', async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL(true, changed);
    renderSettings(graphql);
    const plan = await screen.findByLabelText<HTMLSelectElement>('Plan of bob@example.test');
    await user.selectOptions(plan, 'free');
    await waitFor(() => expect(graphql.calls('UpdateAccount')).toHaveLength(1));
    await user.click(screen.getByRole('button', { name: 'Disable bob@example.test' }));
    await waitFor(() =>
      expect(graphql.calls('UpdateAccount')).toEqual([
        { id: 'u-bob', input: { plan: 'FREE' } },
        { id: 'u-bob', input: { disabled: true } },
      ]),
    );
  });

  it('shows the server’s reason under the account, and keeps the plan that holds', async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL(true, () => ({
      __typename: 'ValidationError',
      message: 'Invalid request: plan: is not for sale',
      issues: [{ path: 'plan', message: 'is not for sale' }],
    }));
    renderSettings(graphql);
    const plan = await screen.findByLabelText<HTMLSelectElement>('Plan of bob@example.test');
    await user.selectOptions(plan, 'enterprise');
    expect((await screen.findByRole('alert')).textContent).toBe('Is not for sale');
    expect(plan.value).toBe('pro');
    expect(plan.getAttribute('aria-invalid')).toBe('true');
  });
});

describe('the settings page for anyone else', () => {
  it('shows no accounts section and never asks for the accounts', async () => {
    const graphql = fakeGraphQL(false, changed);
    renderSettings(graphql);
    await screen.findByRole('heading', { name: 'Free' });
    expect(screen.queryByRole('region', { name: 'Accounts' })).toBeNull();
    expect(graphql.calls('Accounts')).toEqual([]);
  });
});
