import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Client, fetchExchange, Provider } from 'urql';
import { describe, expect, it, vi } from 'vitest';
import { Connections } from './Connections.tsx';

const GATE_ID = '8d0b7a52-3f4e-4c1a-9f0e-2b6c1d5e7a90';
const AGENT_ID = '1f2e3d4c-5b6a-4789-8abc-def012345678';

type Variables = Record<string, unknown>;

/** The GraphQL server as a test double: the gate's connections until detachSubGate empties them. */
function fakeGraphQL() {
  let connections = [
    {
      __typename: 'GateConnection',
      role: 'researcher',
      description: 'Looks things up',
      agentGate: { __typename: 'Gate', id: AGENT_ID, name: 'Planner' },
    },
  ];
  const sent: { operation: string; variables: Variables }[] = [];
  const fetch = vi.fn(async (_url: RequestInfo | URL, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body)) as { query: string; variables: Variables };
    const operation = /(?:query|mutation)\s+(\w+)/.exec(body.query)?.[1] ?? '';
    sent.push({ operation, variables: body.variables });
    let data: unknown = null;
    if (operation === 'GateConnections') data = { gate: { __typename: 'Gate', id: GATE_ID, connections } };
    if (operation === 'DetachSubGate') {
      connections = [];
      data = { detachSubGate: { __typename: 'MutationDetachSubGateSuccess', data: GATE_ID } };
    }
    return new Response(JSON.stringify({ data }), { headers: { 'content-type': 'application/json' } });
  });
  return { fetch, sent };
}

function renderConnections(graphql: ReturnType<typeof fakeGraphQL>) {
  const client = new Client({
    url: 'http://gatehouse.test/graphql',
    exchanges: [fetchExchange],
    fetch: graphql.fetch as typeof fetch,
    preferGetMethod: false,
  });
  render(
    <Provider value={client}>
      <Connections gateId={GATE_ID} active />
    </Provider>,
  );
}

describe('the Connections tab', () => {
  it('lists the agent gates using the gate, and detaches one after confirmation', async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL();
    renderConnections(graphql);

    const link = await screen.findByRole('link', { name: 'Planner' });
    expect(link.getAttribute('href')).toBe(`/gates/${AGENT_ID}`);
    const row = link.closest('tr') as HTMLElement;
    expect(within(row).getByText('AGENT')).toBeTruthy();
    expect(within(row).getByText('researcher')).toBeTruthy();

    await user.click(within(row).getByRole('button', { name: 'Detach' }));
    // Nothing is sent before the confirmation.
    expect(graphql.sent.filter((call) => call.operation === 'DetachSubGate')).toEqual([]);
    const confirm = screen.getByRole('alertdialog', { name: 'Confirm detach' });
    await user.click(within(confirm).getByRole('button', { name: 'Yes, detach' }));

    await screen.findByText('No agent gate uses this gate as a sub-gate.');
    expect(graphql.sent.filter((call) => call.operation === 'DetachSubGate').map((c) => c.variables)).toEqual(
      [{ gateId: AGENT_ID, subGateId: GATE_ID }],
    );
    await waitFor(() => expect(screen.queryByRole('link', { name: 'Planner' })).toBeNull());
  });
});
