import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Client, fetchExchange, Provider } from 'urql';
import { describe, expect, it, vi } from 'vitest';
import { Route, Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { SessionPage } from './SessionPage.tsx';
import { Sessions } from './Sessions.tsx';

const GATE_ID = '1f2e3d4c-5b6a-4789-8abc-def012345678';
type Variables = Record<string, unknown>;

const entry = (n: number, action: string | null, toolCalls: unknown, fields: Variables = {}) => ({
  __typename: 'LogEntry',
  id: `log-${n}`,
  createdAt: `2026-11-23T10:0${n}:00.000Z`,
  inferredAction: action,
  modelUsed: 'mock/echo',
  success: true,
  statusCode: 200,
  errorMessage: null,
  toolCalls,
  toolResults: null,
  promptTokens: 10,
  completionTokens: 5,
  totalTokens: 15,
  costUsd: 0.0012,
  latencyMs: 42,
  stepInput: `user: step ${n}`,
  stepOutput: `answer ${n}`,
  ...fields,
});

/** Eight requests refused before reaching a provider, as issue 29 found them. */
const REFUSED = {
  status: 'FAILING',
  requestCount: 0,
  refusedCount: 8,
  entries: Array.from({ length: 8 }, (_, i) =>
    entry(i + 1, null, null, {
      success: false,
      statusCode: 400,
      errorMessage: 'name the step with the x-gatehouse-action header',
      modelUsed: null,
      stepOutput: null,
      costUsd: 0,
    }),
  ),
};

function fakeGraphQL(
  given: { status?: string; requestCount?: number; refusedCount?: number; entries?: unknown[] } = {},
) {
  let status = given.status ?? 'ACTIVE';
  const sent: { operation: string; variables: Variables }[] = [];
  const session = () => ({
    __typename: 'AgentSession',
    id: 's1',
    key: 'run/1 a',
    status,
    topic: 'Plan a trip',
    spendingCurrent: 0.0024,
    sessionSpendingLimit: 1,
    requestCount: given.requestCount ?? 2,
    refusedCount: given.refusedCount ?? 0,
    promptTokens: 20,
    completionTokens: 10,
    firstRequestAt: '2026-11-23T10:01:00.000Z',
    lastRequestAt: '2026-11-23T10:02:00.000Z',
    endedAt: status === 'COMPLETED' ? '2026-11-23T10:03:00.000Z' : null,
    subGatesUsed: ['search'],
    toolsCalled: ['web_search'],
    requests: {
      __typename: 'AgentSessionRequestsConnection',
      edges: (given.entries ?? [entry(1, 'search', [{ name: 'web_search' }]), entry(2, null, null)]).map(
        (node) => ({ __typename: 'AgentSessionRequestsConnectionEdge', node }),
      ),
      pageInfo: { __typename: 'PageInfo', hasNextPage: false },
    },
  });
  const fetch = vi.fn(async (_url: RequestInfo | URL, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body)) as { query: string; variables: Variables };
    const operation = /(?:query|mutation)\s+(\w+)/.exec(body.query)?.[1] ?? '';
    sent.push({ operation, variables: body.variables });
    let data: unknown = null;
    if (operation === 'SessionPage') {
      data = { gate: { __typename: 'Gate', id: GATE_ID, name: 'Planner' }, session: session() };
    } else if (operation === 'GateSessions') {
      const match = body.variables.status === null || body.variables.status === status;
      data = {
        sessions: {
          __typename: 'QuerySessionsConnection',
          edges: match ? [{ __typename: 'QuerySessionsConnectionEdge', node: session() }] : [],
          pageInfo: { __typename: 'PageInfo', hasNextPage: false },
        },
      };
    } else if (operation === 'EndSession') {
      status = 'COMPLETED';
      const { id, endedAt } = session();
      data = {
        endSession: {
          __typename: 'MutationEndSessionSuccess',
          data: { __typename: 'AgentSession', id, status, endedAt },
        },
      };
    }
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
        <Route path="/gates/:id/session" component={SessionPage} />
        <Route path="/gates/:id">
          <Sessions gateId={GATE_ID} active />
        </Route>
      </Router>
    </Provider>,
  );
}

describe('an agent gate’s sessions', () => {
  it('lists sessions with status, spending against the budget and requests, filtered by status', async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL();
    renderAt(`/gates/${GATE_ID}`, graphql);

    const link = await screen.findByRole('link', { name: 'run/1 a' });
    expect(link.getAttribute('href')).toBe(`/gates/${GATE_ID}/session?key=run%2F1+a`);
    const row = link.closest('tr') as HTMLElement;
    expect(within(row).getByText('active')).toBeTruthy();
    expect(row.textContent).toContain('$0.0024 of $1.00');
    await user.selectOptions(screen.getByLabelText('Status'), 'COMPLETED');
    await screen.findByText('No session has this status.');
    expect(graphql.sent.at(-1)?.variables).toMatchObject({ gateId: GATE_ID, status: 'COMPLETED' });
  });

  it('shows a session’s requests as a timeline and ends it after confirmation', async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL();
    renderAt(`/gates/${GATE_ID}/session?key=${encodeURIComponent('run/1 a')}`, graphql);

    const timeline = await screen.findByRole('list', { name: 'Session requests' });
    const items = within(timeline).getAllByRole('listitem');
    expect(items).toHaveLength(2);
    expect(items[0]?.textContent).toContain('action search');
    expect(items[0]?.textContent).toContain('Tool calls');
    expect(items[1]?.textContent).toContain('no action');
    // Each step says what went in and what came out.
    expect(within(items[0] as HTMLElement).getByText('user: step 1')).toBeTruthy();
    expect(within(items[0] as HTMLElement).getByText('answer 1')).toBeTruthy();
    expect(graphql.sent[0]?.variables).toMatchObject({ gateId: GATE_ID, key: 'run/1 a' });

    await user.click(screen.getByRole('button', { name: 'End session' }));
    await user.click(screen.getByRole('button', { name: 'Yes, end it' }));
    await screen.findByText('completed');
    expect(screen.queryByRole('button', { name: 'End session' })).toBeNull();
    expect(graphql.sent.filter((call) => call.operation === 'EndSession').map((c) => c.variables)).toEqual([
      { gateId: GATE_ID, key: 'run/1 a' },
    ]);
  });

  it('shows a session of refused requests: each of them, counted, and the session failing', async () => {
    renderAt(`/gates/${GATE_ID}/session?key=${encodeURIComponent('run/1 a')}`, fakeGraphQL(REFUSED));

    const timeline = await screen.findByRole('list', { name: 'Session requests' });
    const items = within(timeline).getAllByRole('listitem');
    expect(items).toHaveLength(8);
    expect(items.every((item) => item.textContent?.includes('failed 400'))).toBe(true);
    expect(within(items[0] as HTMLElement).getByText('user: step 1')).toBeTruthy();
    expect(screen.queryByText('No request is logged for this session.')).toBeNull();
    expect(screen.getByText('8 (8 refused before reaching a provider)')).toBeTruthy();
    expect(screen.getByRole('heading', { level: 1 }).textContent).toContain('failing');
  });
});
