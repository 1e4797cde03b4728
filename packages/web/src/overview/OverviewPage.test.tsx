import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Client, fetchExchange, Provider } from 'urql';
import { describe, expect, it, vi } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { OverviewPage } from './OverviewPage.tsx';

type Variables = Record<string, unknown>;
const GATE = '1f2e3d4c-5b6a-4789-8abc-def012345678';
const KEY = '9d1f2e3a-4b5c-4d6e-8f70-8a9b0c1d2e3f';
const none = { top: [], other: { count: 0, requests: 0, errors: 0, costUsd: 0 } };

/** The GraphQL server as a test double: an overview with 20 failures of four classes, one point. */
function fakeGraphQL() {
  const sent: { operation: string; variables: Variables }[] = [];
  const fetch = vi.fn(async (_url: RequestInfo | URL, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body)) as { query: string; variables: Variables };
    const operation = /(?:query|mutation)\s+(\w+)/.exec(body.query)?.[1] ?? '';
    sent.push({ operation, variables: body.variables });
    const since = String(body.variables.since);
    const data = {
      overview: {
        totalRequests: 100,
        failedRequests: 20,
        failuresByClass: { providerError: 3, limitRefusal: 9, rateLimit: 2, clientError: 6 },
        totalCostUsd: 1.25,
        avgLatencyMs: 300,
        p50LatencyMs: 210,
        p95LatencyMs: 1900,
        activeGates: 1,
        recentRequests: [],
        byGate: none,
        byModel: none,
        spendingByKey: none,
        spendingByEndUser: none,
      },
      logSeries: {
        bucket: 'HOUR',
        since,
        until: String(body.variables.until),
        points: [
          {
            start: since,
            requests: 100,
            errors: 20,
            costUsd: 1.25,
            p50LatencyMs: 210,
            p95LatencyMs: 1900,
          },
        ],
      },
      anyRequest: { edges: [{ node: { id: 'e1' } }] },
      gates: { edges: [{ node: { id: GATE, name: 'Support bot' } }] },
      apiKeys: [{ id: KEY, name: 'backend' }],
    };
    return new Response(JSON.stringify({ data }), { headers: { 'content-type': 'application/json' } });
  });
  return { fetch, sent };
}

function renderAt(path: string, graphql: ReturnType<typeof fakeGraphQL>) {
  const client = new Client({
    url: 'http://gatehouse.test/graphql',
    exchanges: [fetchExchange],
    fetch: graphql.fetch as typeof fetch,
    preferGetMethod: false,
  });
  const location = memoryLocation({ path, record: true });
  render(
    <Provider value={client}>
      <Router hook={location.hook} searchHook={location.searchHook}>
        <OverviewPage />
      </Router>
    </Provider>,
  );
  return location;
}

describe('the overview', () => {
  it('is filtered by the gate, model, key and end user the address names, and changes it', {
    timeout: 20_000,
  }, async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL();
    const location = renderAt('/?window=7d&model=mock%2Fsmart&endUser=ann', graphql);
    await screen.findByRole('form', { name: 'Overview filters' });
    expect(graphql.sent[0]?.variables).toMatchObject({
      model: 'mock/smart',
      endUser: 'ann',
      gateId: null,
      apiKeyId: null,
      bucket: 'DAY',
    });
    expect(screen.getByLabelText<HTMLInputElement>('Model').value).toBe('mock/smart');

    await user.selectOptions(screen.getByLabelText('Gate'), 'Support bot');
    await user.selectOptions(screen.getByLabelText('API key'), 'backend');
    await user.clear(screen.getByLabelText('End user'));
    await user.click(screen.getByRole('button', { name: 'Apply' }));
    await waitFor(() =>
      expect(location.history?.at(-1)).toBe(`/?window=7d&gateId=${GATE}&model=mock%2Fsmart&apiKeyId=${KEY}`),
    );
    await waitFor(() =>
      expect(graphql.sent.at(-1)?.variables).toMatchObject({ gateId: GATE, apiKeyId: KEY, endUser: null }),
    );

    await user.click(screen.getByRole('button', { name: 'Clear filters' }));
    await waitFor(() => expect(location.history?.at(-1)).toBe('/?window=7d'));
  });

  it('splits the failures by class and shows p50/p95 latency', async () => {
    renderAt('/', fakeGraphQL());
    const split = await screen.findByLabelText('Failed requests by class');
    const pairs = Array.from(split.querySelectorAll('div'), (d) => d.textContent);
    expect(pairs).toEqual(['Provider errors3', 'Limit refusals9', 'Rate limited2', 'Client errors6']);
    const totals = screen.getByLabelText('Totals, last 24 hours');
    expect(within(totals).getByText('210 ms / 1,900 ms')).toBeTruthy();
  });

  it('draws each chart with a name and its data as a table', async () => {
    renderAt('/', fakeGraphQL());
    const requests = await screen.findByRole('figure', { name: 'Requests' }, { timeout: 5000 });
    expect(within(requests).getByRole('img', { name: /^Requests chart/ })).toBeTruthy();
    const table = within(requests).getByRole('table', { name: 'Requests' });
    const rows = within(table).getAllByRole('row');
    // A header and 24 or 25 hours (the window's first and last hours, both partly in it).
    expect(rows.length).toBeGreaterThanOrEqual(25);
    expect(
      within(table)
        .getAllByRole('cell')
        .some((cell) => cell.textContent === '20'),
    ).toBe(true);
    expect(screen.getAllByText('Show data')).toHaveLength(3);
  });
});
