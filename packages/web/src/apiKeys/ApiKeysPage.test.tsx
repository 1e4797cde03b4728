import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Client, fetchExchange, Provider } from 'urql';
import { describe, expect, it, vi } from 'vitest';
import { ApiKeysPage } from './ApiKeysPage.tsx';

type Variables = Record<string, unknown>;

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
};

/**
 * The GraphQL server as a test double behind urql's real client: answers by operation name and
 * records what the page sent. `update` decides updateApiKey's outcome.
 */
function fakeGraphQL(update: (variables: Variables) => Record<string, unknown>) {
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
          : operation === 'UpdateApiKeyLimits'
            ? { updateApiKey: update(body.variables) }
            : null;
    return new Response(JSON.stringify(data ? { data } : { errors: [{ message: `no ${operation} here` }] }), {
      headers: { 'content-type': 'application/json' },
    });
  });
  const calls = (operation: string) => sent.filter((c) => c.operation === operation).map((c) => c.variables);
  return { fetch, calls };
}

function renderPage(graphql: ReturnType<typeof fakeGraphQL>) {
  const client = new Client({
    url: 'http://gatehouse.test/graphql',
    exchanges: [fetchExchange],
    fetch: graphql.fetch as typeof fetch,
    preferGetMethod: false,
  });
  render(
    <Provider value={client}>
      <ApiKeysPage />
    </Provider>,
  );
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
});
