import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Client, cacheExchange, fetchExchange, Provider } from 'urql';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Link, Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { guardedLocation, LEAVE_QUESTION } from '../ui/unsavedChanges.ts';
import { SpendingAlertsCard } from './SpendingAlertsCard.tsx';

type Variables = Record<string, unknown>;

const delivery = (overrides: Record<string, unknown>) => ({
  __typename: 'SpendingAlertDelivery',
  id: 'd-1',
  gateId: 'g-1',
  gateName: 'Support bot',
  url: 'https://hooks.example.test/spending',
  status: 'DELIVERED',
  attempts: 2,
  lastStatus: 200,
  lastError: null,
  nextAttemptAt: null,
  deliveredAt: '2026-11-27T12:00:05.000Z',
  createdAt: '2026-11-27T12:00:00.000Z',
  ...overrides,
});

/** The GraphQL server as a test double behind urql's real client, answering by operation name. */
function fakeGraphQL(
  answer: (operation: string, variables: Variables) => unknown,
  exchanges = [fetchExchange],
) {
  const sent: { operation: string; variables: Variables }[] = [];
  const fetch = vi.fn(async (_url: RequestInfo | URL, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body)) as { query: string; variables: Variables };
    const operation = /(?:query|mutation)\s+(\w+)/.exec(body.query)?.[1] ?? '';
    sent.push({ operation, variables: body.variables });
    return new Response(JSON.stringify({ data: answer(operation, body.variables) }), {
      headers: { 'content-type': 'application/json' },
    });
  });
  const client = new Client({
    url: 'http://gatehouse.test/graphql',
    exchanges,
    fetch: fetch as typeof globalThis.fetch,
    preferGetMethod: false,
  });
  return { client, sent };
}

const settings = (url: string | null, secret = 'whsec_first') => ({
  __typename: 'SpendingAlertSettings',
  defaultWebhook: url,
  signingSecret: secret,
});

afterEach(() => {
  Reflect.deleteProperty(window, 'confirm');
});

describe('SpendingAlertsCard', () => {
  it('lists each delivery with its status, attempts and outcome', async () => {
    const { client } = fakeGraphQL((operation) =>
      operation === 'AlertDeliveries'
        ? {
            spendingAlertDeliveries: [
              delivery({}),
              delivery({
                id: 'd-2',
                gateName: 'Night batch',
                status: 'PENDING',
                attempts: 1,
                lastStatus: 500,
                lastError: 'answered HTTP 500',
                deliveredAt: null,
                nextAttemptAt: '2026-11-27T12:01:00.000Z',
              }),
              delivery({
                id: 'd-3',
                status: 'FAILED',
                attempts: 8,
                lastStatus: null,
                lastError: 'fetch failed',
                deliveredAt: null,
              }),
            ],
          }
        : { spendingAlertSettings: settings(null) },
    );
    render(
      <Provider value={client}>
        <SpendingAlertsCard />
      </Provider>,
    );
    const table = await screen.findByRole('table');
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(3);
    expect(within(rows[0] as HTMLElement).getByText('delivered')).toBeTruthy();
    expect(within(rows[0] as HTMLElement).getByText('2')).toBeTruthy();
    expect(within(rows[0] as HTMLElement).getByText('Support bot')).toBeTruthy();
    expect(within(rows[1] as HTMLElement).getByText('retrying')).toBeTruthy();
    expect(within(rows[1] as HTMLElement).getByText(/answered HTTP 500; next attempt/)).toBeTruthy();
    expect(within(rows[2] as HTMLElement).getByText('failed')).toBeTruthy();
    expect(within(rows[2] as HTMLElement).getByText('fetch failed; no attempt left')).toBeTruthy();
  });

  it('saves the default webhook, shows the server’s refusal, and reveals and rotates the secret', async () => {
    const user = userEvent.setup();
    let secret = 'whsec_first';
    const { client, sent } = fakeGraphQL((operation, variables) => {
      if (operation === 'AlertDeliveries') return { spendingAlertDeliveries: [] };
      if (operation === 'SetSpendingAlertWebhook') {
        return variables.url === 'nope'
          ? {
              setSpendingAlertWebhook: {
                __typename: 'ValidationError',
                message: 'Invalid input',
                issues: [{ __typename: 'FieldIssue', path: 'url', message: 'must be an http or https URL' }],
              },
            }
          : {
              setSpendingAlertWebhook: {
                __typename: 'MutationSetSpendingAlertWebhookSuccess',
                data: settings(String(variables.url), secret),
              },
            };
      }
      if (operation === 'RotateWebhookSigningSecret') {
        secret = 'whsec_second';
        return { rotateWebhookSigningSecret: settings(null, secret) };
      }
      return { spendingAlertSettings: settings(null, secret) };
    });
    render(
      <Provider value={client}>
        <SpendingAlertsCard />
      </Provider>,
    );
    expect(await screen.findByText(/No alert sent yet/)).toBeTruthy();
    const input = await screen.findByLabelText('Default webhook');
    await user.type(input, 'nope');
    await user.click(screen.getByRole('button', { name: 'Save webhook' }));
    expect((await screen.findByRole('alert')).textContent).toBe('The webhook must be an http or https URL');
    await user.clear(input);
    await user.type(input, 'https://hooks.example.test/spending');
    await user.click(screen.getByRole('button', { name: 'Save webhook' }));
    expect(await screen.findByText('Saved.')).toBeTruthy();
    expect(sent.filter((s) => s.operation === 'SetSpendingAlertWebhook').map((s) => s.variables.url)).toEqual(
      ['nope', 'https://hooks.example.test/spending'],
    );

    const shown = screen.getByLabelText('Signing secret') as HTMLInputElement;
    expect(shown.type).toBe('password');
    await user.click(screen.getByRole('button', { name: 'Show' }));
    expect(shown.type).toBe('text');
    expect(shown.value).toBe('whsec_first');
    await user.click(screen.getByRole('button', { name: 'Rotate' }));
    await waitFor(() => expect(shown.value).toBe('whsec_second'));
  });

  it('still says Saved. once the settings it saved come back from the server', async () => {
    // The dashboard's own exchanges: the mutation's SpendingAlertSettings refetches the settings,
    // which then hold the new webhook (the form was keyed on it, and lost its "Saved." remounting).
    const user = userEvent.setup();
    let webhook: string | null = null;
    const { client, sent } = fakeGraphQL(
      (operation, variables) => {
        if (operation === 'AlertDeliveries') return { spendingAlertDeliveries: [] };
        if (operation === 'SetSpendingAlertWebhook') {
          webhook = String(variables.url);
          return {
            setSpendingAlertWebhook: {
              __typename: 'MutationSetSpendingAlertWebhookSuccess',
              data: settings(webhook),
            },
          };
        }
        return { spendingAlertSettings: settings(webhook) };
      },
      [cacheExchange, fetchExchange],
    );
    render(
      <Provider value={client}>
        <SpendingAlertsCard />
      </Provider>,
    );
    const input = await screen.findByLabelText('Default webhook');
    await user.type(input, 'https://hooks.example.test/spending');
    await user.click(screen.getByRole('button', { name: 'Save webhook' }));
    await waitFor(() =>
      expect(sent.filter((s) => s.operation === 'SpendingAlertSettings').length).toBeGreaterThan(1),
    );
    await waitFor(() =>
      expect((screen.getByLabelText('Default webhook') as HTMLInputElement).value).toBe(
        'https://hooks.example.test/spending',
      ),
    );
    expect(screen.getByRole('status').textContent).toContain('Saved.');
  });

  it('asks before a link drops an unsaved webhook, and leaves without asking once it is saved', async () => {
    const user = userEvent.setup();
    const { client } = fakeGraphQL((operation, variables) => {
      if (operation === 'AlertDeliveries') return { spendingAlertDeliveries: [] };
      if (operation === 'SetSpendingAlertWebhook') {
        return {
          setSpendingAlertWebhook: {
            __typename: 'MutationSetSpendingAlertWebhookSuccess',
            data: settings(String(variables.url)),
          },
        };
      }
      return { spendingAlertSettings: settings('https://hooks.example.test/old') };
    });
    const location = memoryLocation({ path: '/settings', record: true });
    render(
      <Provider value={client}>
        <Router hook={guardedLocation(location.hook)}>
          <Link href="/gates">Gates</Link>
          <Link href="/logs">Logs</Link>
          <SpendingAlertsCard />
        </Router>
      </Provider>,
    );
    // happy-dom has no window.confirm: the browser's question, answered "stay".
    const confirm = vi.fn(() => false);
    window.confirm = confirm;

    const input = await screen.findByLabelText('Default webhook');
    await waitFor(() => expect((input as HTMLInputElement).value).toBe('https://hooks.example.test/old'));
    const at = () => location.history?.at(-1);
    await user.type(input, '/x');
    await user.click(screen.getByRole('link', { name: 'Gates' }));
    expect(confirm).toHaveBeenCalledWith(LEAVE_QUESTION);
    expect(at()).toBe('/settings');

    // Typed back to what is stored: nothing to drop.
    await user.type(input, '{Backspace}{Backspace}');
    await user.click(screen.getByRole('link', { name: 'Gates' }));
    expect(at()).toBe('/gates');
    expect(confirm).toHaveBeenCalledTimes(1);

    await user.clear(input);
    await user.type(input, 'https://hooks.example.test/new');
    await user.click(screen.getByRole('link', { name: 'Logs' }));
    expect(confirm).toHaveBeenCalledTimes(2);
    expect(at()).toBe('/gates');

    // Saved: leaving drops nothing.
    await user.click(screen.getByRole('button', { name: 'Save webhook' }));
    await screen.findByText('Saved.');
    await user.click(screen.getByRole('link', { name: 'Logs' }));
    expect(at()).toBe('/logs');
    expect(confirm).toHaveBeenCalledTimes(2);
  });
});
