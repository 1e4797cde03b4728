import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Client, fetchExchange, Provider } from 'urql';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { DROP_QUESTION, guardedLocation, LEAVE_QUESTION, SECRET_QUESTION } from '../ui/unsavedChanges.ts';
import { ApiKeysPage } from './ApiKeysPage.tsx';

type Variables = Record<string, unknown>;

const SUPPORT = '0b6f3a52-5d3e-4c1e-9d0a-6a1f2b3c4d5e';
const SEARCH = '7c2d9e41-8a6b-4f3c-b2d1-0e9f8a7b6c5d';

const batchKey = {
  __typename: 'ApiKey',
  id: 'k-batch',
  name: 'batch job',
  prefix: 'gh_abc1234',
  createdAt: '2026-11-02T10:00:00.000Z',
  lastUsedAt: null,
  revokedAt: null,
  rateLimitRpm: 10,
  rateLimitTpm: null,
  expiresAt: null,
  previousKeyExpiresAt: null,
  spendingLimit: 5,
  spendingLimitPeriod: 'MONTHLY',
  spendingEnforcement: 'BLOCK',
  spendingCurrent: 1.25,
  spendingStatus: 'ACTIVE',
  allowedGates: [SUPPORT],
  allowedTaskTypes: ['CHAT'],
};

const gates = [
  { __typename: 'Gate', id: SUPPORT, name: 'support-bot' },
  { __typename: 'Gate', id: SEARCH, name: 'search' },
];

/**
 * The GraphQL server as a test double behind urql's real client: answers by operation name and
 * records what the page sent. `update` decides updateApiKey's outcome.
 */
function fakeGraphQL(
  update: (variables: Variables) => Record<string, unknown>,
  roll: (variables: Variables) => Record<string, unknown> = rolled,
) {
  const sent: { operation: string; variables: Variables }[] = [];
  const fetch = vi.fn(async (_url: RequestInfo | URL, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body)) as { query: string; variables: Variables };
    const operation = /(?:query|mutation)\s+(\w+)/.exec(body.query)?.[1] ?? '';
    sent.push({ operation, variables: body.variables });
    const data =
      operation === 'ApiKeys'
        ? { apiKeys: [batchKey] }
        : operation === 'CreateApiKey'
          ? {
              createApiKey: {
                __typename: 'MutationCreateApiKeySuccess',
                data: {
                  key: 'gh_secret',
                  apiKey: { __typename: 'ApiKey', id: 'k-new', name: body.variables.name },
                },
              },
            }
          : operation === 'UpdateApiKeyLimits' || operation === 'UpdateApiKeySettings'
            ? { updateApiKey: update(body.variables) }
            : operation === 'ApiKeyGates'
              ? {
                  gates: {
                    __typename: 'GateConnection',
                    edges: gates.map((node) => ({ __typename: 'GateEdge', node })),
                  },
                }
              : operation === 'RollApiKey'
                ? { rollApiKey: roll(body.variables) }
                : null;
    return new Response(JSON.stringify(data ? { data } : { errors: [{ message: `no ${operation} here` }] }), {
      headers: { 'content-type': 'application/json' },
    });
  });
  const calls = (operation: string) => sent.filter((c) => c.operation === operation).map((c) => c.variables);
  return { fetch, calls };
}

/** The page at /api-keys, behind the app's own guard on leaving; resolves to where the app went. */
function renderPage(graphql: ReturnType<typeof fakeGraphQL>) {
  const client = new Client({
    url: 'http://gatehouse.test/graphql',
    exchanges: [fetchExchange],
    fetch: graphql.fetch as typeof fetch,
    preferGetMethod: false,
  });
  const location = memoryLocation({ path: '/api-keys', record: true });
  render(
    <Provider value={client}>
      <Router hook={guardedLocation(location.hook)} searchHook={location.searchHook}>
        <ApiKeysPage />
      </Router>
    </Provider>,
  );
  return { at: () => location.history?.at(-1) };
}

afterEach(() => {
  Reflect.deleteProperty(window, 'confirm');
});

function rolled(variables: Variables) {
  return {
    __typename: 'MutationRollApiKeySuccess',
    data: {
      __typename: 'CreatedApiKey',
      key: 'gh_rolled_secret',
      apiKey: {
        __typename: 'ApiKey',
        id: variables.id,
        name: 'batch job',
        prefix: 'gh_rolled12',
        previousKeyExpiresAt: '2026-11-03T10:00:00.000Z',
      },
    },
  };
}

const savedLimits = (variables: Variables) => ({
  __typename: 'MutationUpdateApiKeySuccess',
  data: { __typename: 'ApiKey', id: variables.id, ...(variables.input as Variables) },
});

describe('the API keys page', () => {
  it('links each key to its requests in the logs', async () => {
    renderPage(fakeGraphQL(savedLimits));
    const link = await screen.findByRole('link', { name: 'batch job' });
    expect(link.getAttribute('href')).toBe('/logs?apiKeyId=k-batch');
  });

  it('creates a key with its limits as numbers, and refuses a fraction on its field first', async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL(savedLimits);
    renderPage(graphql);
    const form = await screen.findByRole('form', { name: 'Create an API key' });
    await user.type(within(form).getByLabelText('New key name'), 'nightly batch');
    await user.type(within(form).getByLabelText('Tokens per minute'), '2.5');
    await user.click(within(form).getByRole('button', { name: 'Create key' }));
    expect((await within(form).findByText('must be a whole number of tokens per minute')).id).toBe(
      'newKey-rateLimitTpm-error',
    );
    expect(graphql.calls('CreateApiKey')).toEqual([]);

    await user.clear(within(form).getByLabelText('Tokens per minute'));
    await user.type(within(form).getByLabelText('Tokens per minute'), '90000');
    await user.type(within(form).getByLabelText('Requests per minute'), '60');
    await user.click(within(form).getByRole('button', { name: 'Create key' }));
    await screen.findByText('Your new key: copy it now, you will not see it again');
    expect(graphql.calls('CreateApiKey')).toEqual([
      { name: 'nightly batch', rateLimitRpm: 60, rateLimitTpm: 90000 },
    ]);
  });

  it("shows a key's limits and saves new ones, a cleared one as no limit", async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL(savedLimits);
    renderPage(graphql);
    expect(await screen.findByRole('cell', { name: '10 requests a minute' })).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Edit the rate limits of batch job' }));
    const form = screen.getByRole('form', { name: 'Rate limits of batch job' });
    await user.clear(within(form).getByLabelText('Requests per minute'));
    await user.type(within(form).getByLabelText('Tokens per minute'), '5000');
    await user.click(within(form).getByRole('button', { name: 'Save limits' }));
    await waitFor(() => expect(screen.queryByRole('form', { name: 'Rate limits of batch job' })).toBeNull());
    expect(graphql.calls('UpdateApiKeyLimits')).toEqual([
      { id: 'k-batch', input: { rateLimitRpm: null, rateLimitTpm: 5000 } },
    ]);
  });

  it("puts the server's issues on the field they name", async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL(() => ({
      __typename: 'ValidationError',
      message: 'Invalid request',
      issues: [{ path: 'rateLimitRpm', message: 'is more than this plan allows' }],
    }));
    renderPage(graphql);
    await user.click(await screen.findByRole('button', { name: 'Edit the rate limits of batch job' }));
    const form = screen.getByRole('form', { name: 'Rate limits of batch job' });
    await user.click(within(form).getByRole('button', { name: 'Save limits' }));
    expect((await within(form).findByText('Is more than this plan allows')).id).toBe(
      'key-k-batch-rateLimitRpm-error',
    );
  });

  it("shows a key's spending and scope by the gates' names", async () => {
    renderPage(fakeGraphQL(savedLimits));
    expect(await screen.findByRole('cell', { name: '$1.25 of $5.00 this month' })).toBeTruthy();
    expect(await screen.findByRole('cell', { name: 'support-bot · chat' })).toBeTruthy();
  });

  it('saves a spending limit, scope and expiry as GraphQL takes them, and refuses a bad limit first', async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL(savedLimits);
    renderPage(graphql);
    await user.click(
      await screen.findByRole('button', { name: 'Settings of batch job: spending limit, scope and expiry' }),
    );
    const form = screen.getByRole('form', { name: 'Settings of batch job' });
    const limit = within(form).getByLabelText('Spending limit (USD)');
    await user.clear(limit);
    await user.type(limit, '-3');
    await user.click(within(form).getByRole('button', { name: 'Save settings' }));
    expect((await within(form).findByText('Too small: expected number to be >=0')).id).toBe(
      'key-k-batch-spendingLimit-error',
    );
    expect(graphql.calls('UpdateApiKeySettings')).toEqual([]);

    await user.clear(limit);
    await user.type(limit, '20');
    await user.selectOptions(within(form).getByLabelText('Period'), "Over the key's life");
    await user.click(within(form).getByLabelText('search'));
    await user.click(within(form).getByLabelText('embeddings'));
    fireEvent.change(within(form).getByLabelText('Expires'), { target: { value: '2999-01-02T03:04' } });
    await user.click(within(form).getByRole('button', { name: 'Save settings' }));
    await waitFor(() => expect(screen.queryByRole('form', { name: 'Settings of batch job' })).toBeNull());
    expect(graphql.calls('UpdateApiKeySettings')).toEqual([
      {
        id: 'k-batch',
        input: {
          spendingLimit: 20,
          spendingLimitPeriod: 'TOTAL',
          spendingEnforcement: 'BLOCK',
          allowedGates: [SUPPORT, SEARCH],
          allowedTaskTypes: ['CHAT', 'EMBEDDINGS'],
          expiresAt: new Date('2999-01-02T03:04').toISOString(),
        },
      },
    ]);
  });

  it("puts the server's issue on a gate of the scope on the gates' field", async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL(() => ({
      __typename: 'ValidationError',
      message: 'Invalid request',
      issues: [{ path: 'allowedGates.0', message: `no gate of yours has id ${SUPPORT}` }],
    }));
    renderPage(graphql);
    await user.click(
      await screen.findByRole('button', { name: 'Settings of batch job: spending limit, scope and expiry' }),
    );
    const form = screen.getByRole('form', { name: 'Settings of batch job' });
    await user.click(within(form).getByRole('button', { name: 'Save settings' }));
    expect((await within(form).findByText(`No gate of yours has id ${SUPPORT}`)).id).toBe(
      'key-k-batch-allowedGates-error',
    );
  });

  it('rolls a key with the grace chosen and shows the new secret once', async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL(savedLimits);
    renderPage(graphql);
    await user.click(await screen.findByRole('button', { name: 'Roll batch job' }));
    const form = screen.getByRole('form', { name: 'Roll batch job' });
    await user.selectOptions(within(form).getByLabelText('Keep the current secret working for'), '24 hours');
    await user.click(within(form).getByRole('button', { name: 'Roll key' }));
    await screen.findByText('Your new key: copy it now, you will not see it again');
    expect((screen.getByLabelText('API key “batch job”') as HTMLInputElement).value).toBe('gh_rolled_secret');
    expect(graphql.calls('RollApiKey')).toEqual([{ id: 'k-batch', graceSeconds: 86400 }]);
  });

  it('asks before a link drops a key half made, and before Cancel drops edited limits or settings', async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL(savedLimits);
    const page = renderPage(graphql);
    // happy-dom has no window.confirm: the browser's question, answered "stay" until told otherwise.
    const confirm = vi.fn(() => false);
    window.confirm = confirm;

    const create = await screen.findByRole('form', { name: 'Create an API key' });
    await user.type(within(create).getByLabelText('New key name'), 'half typed');
    await user.click(await screen.findByRole('link', { name: 'batch job' }));
    expect(confirm).toHaveBeenLastCalledWith(LEAVE_QUESTION);
    expect(page.at()).toBe('/api-keys');

    await user.click(screen.getByRole('button', { name: 'Edit the rate limits of batch job' }));
    const limits = screen.getByRole('form', { name: 'Rate limits of batch job' });
    await user.type(within(limits).getByLabelText('Tokens per minute'), '5000');
    await user.click(within(limits).getByRole('button', { name: 'Cancel' }));
    expect(confirm).toHaveBeenLastCalledWith(DROP_QUESTION);
    expect((within(limits).getByLabelText('Tokens per minute') as HTMLInputElement).value).toBe('5000');
    confirm.mockReturnValue(true);
    await user.click(within(limits).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('form', { name: 'Rate limits of batch job' })).toBeNull();

    confirm.mockReturnValue(false);
    await user.click(
      screen.getByRole('button', { name: 'Settings of batch job: spending limit, scope and expiry' }),
    );
    const settings = screen.getByRole('form', { name: 'Settings of batch job' });
    await user.click(within(settings).getByLabelText('search'));
    await user.click(within(settings).getByRole('button', { name: 'Cancel' }));
    expect(confirm).toHaveBeenLastCalledWith(DROP_QUESTION);
    expect(confirm).toHaveBeenCalledTimes(4);
    expect(screen.getByRole('form', { name: 'Settings of batch job' })).toBeTruthy();
    // Ticked and unticked again: nothing left to drop, so Cancel closes without a question.
    await user.click(within(settings).getByLabelText('search'));
    await user.click(within(settings).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('form', { name: 'Settings of batch job' })).toBeNull();
    expect(confirm).toHaveBeenCalledTimes(4);

    // The key made, its secret on screen: a link asks, as the secret is never shown again.
    await user.click(within(create).getByRole('button', { name: 'Create key' }));
    await screen.findByText('Your new key: copy it now, you will not see it again');
    await user.click(screen.getByRole('link', { name: 'batch job' }));
    expect(confirm).toHaveBeenCalledTimes(5);
    expect(confirm).toHaveBeenLastCalledWith(SECRET_QUESTION);
    expect(page.at()).toBe('/api-keys');
    // Copied, the form is empty again: the link leaves without asking.
    await user.click(screen.getByRole('button', { name: 'I have copied the key' }));
    await user.click(screen.getByRole('link', { name: 'batch job' }));
    expect(confirm).toHaveBeenCalledTimes(5);
    expect(page.at()).toBe('/logs?apiKeyId=k-batch');
  });
});
