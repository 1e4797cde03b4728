import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Client, fetchExchange, Provider } from 'urql';
import { describe, expect, it, vi } from 'vitest';
import { SubGates } from './SubGates.tsx';

const AGENT_ID = '1f2e3d4c-5b6a-4789-8abc-def012345678';
const SEARCH_ID = '8d0b7a52-3f4e-4c1a-9f0e-2b6c1d5e7a90';

type Variables = Record<string, unknown>;

/** The server as a test double: attach refuses a bad role, then accepts; detach empties the list. */
function fakeGraphQL() {
  let subGates: unknown[] = [];
  const sent: { operation: string; variables: Variables }[] = [];
  const fetch = vi.fn(async (_url: RequestInfo | URL, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body)) as { query: string; variables: Variables };
    const operation = /(?:query|mutation)\s+(\w+)/.exec(body.query)?.[1] ?? '';
    sent.push({ operation, variables: body.variables });
    const input = body.variables.input as Record<string, unknown> | undefined;
    let data: unknown = null;
    if (operation === 'GateSubGates') {
      data = {
        gate: { __typename: 'Gate', id: AGENT_ID, subGates },
        gates: {
          __typename: 'QueryGatesConnection',
          edges: [
            {
              __typename: 'QueryGatesConnectionEdge',
              node: { __typename: 'Gate', id: AGENT_ID, name: 'Planner' },
            },
            {
              __typename: 'QueryGatesConnectionEdge',
              node: { __typename: 'Gate', id: SEARCH_ID, name: 'Search' },
            },
          ],
        },
      };
    } else if (operation === 'AttachSubGate' && input?.role === 'Bad Role') {
      data = {
        attachSubGate: {
          __typename: 'ValidationError',
          message: 'Invalid sub-gate',
          issues: [
            { __typename: 'Issue', path: 'role', message: 'must be 1 to 64 characters of a-z, 0-9, _ and -' },
          ],
        },
      };
    } else if (operation === 'AttachSubGate') {
      subGates = [
        {
          __typename: 'SubGate',
          role: input?.role,
          description: input?.description,
          visibleTools: input?.visibleTools,
          gate: { __typename: 'Gate', id: SEARCH_ID, name: 'Search' },
        },
      ];
      data = {
        attachSubGate: {
          __typename: 'MutationAttachSubGateSuccess',
          data: { __typename: 'SubGate', role: input?.role },
        },
      };
    } else if (operation === 'DetachSubGate') {
      subGates = [];
      data = { detachSubGate: { __typename: 'MutationDetachSubGateSuccess', data: SEARCH_ID } };
    }
    return new Response(JSON.stringify({ data }), { headers: { 'content-type': 'application/json' } });
  });
  return { fetch, sent };
}

describe('the Sub-Gates tab', () => {
  it('shows the server’s error on the role, attaches, lists the sub-gate, and detaches it after confirmation', async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL();
    const client = new Client({
      url: 'http://gatehouse.test/graphql',
      exchanges: [fetchExchange],
      fetch: graphql.fetch as typeof fetch,
      preferGetMethod: false,
    });
    render(
      <Provider value={client}>
        <SubGates gateId={AGENT_ID} active />
      </Provider>,
    );

    await screen.findByText('This agent gate has no sub-gates yet.');
    // The agent gate itself is not offered.
    const picker = screen.getByLabelText<HTMLSelectElement>('Sub-gate');
    expect([...picker.options].map((option) => option.text)).toEqual(['Choose a gate…', 'Search']);
    await user.selectOptions(picker, SEARCH_ID);
    await user.type(screen.getByLabelText('Role'), 'Bad Role');
    await user.click(screen.getByRole('button', { name: 'Attach sub-gate' }));
    expect((await screen.findByText('Must be 1 to 64 characters of a-z, 0-9, _ and -')).id).toBe(
      'role-error',
    );

    await user.clear(screen.getByLabelText('Role'));
    await user.type(screen.getByLabelText('Role'), 'search');
    await user.type(screen.getByLabelText('Sub-gate visible tools'), 'web_search, fetch');
    await user.click(screen.getByRole('button', { name: 'Attach sub-gate' }));

    const table = await screen.findByRole('table', { name: 'Sub-gates' });
    const link = within(table).getByRole('link', { name: 'Search' });
    expect(link.getAttribute('href')).toBe(`/gates/${SEARCH_ID}`);
    expect(within(table).getByText('web_search, fetch')).toBeTruthy();
    expect(graphql.sent.filter((call) => call.operation === 'AttachSubGate').at(-1)?.variables).toEqual({
      gateId: AGENT_ID,
      input: {
        subGateId: SEARCH_ID,
        role: 'search',
        description: null,
        visibleTools: ['web_search', 'fetch'],
      },
    });

    await user.click(within(table).getByRole('button', { name: 'Detach' }));
    await user.click(screen.getByRole('button', { name: 'Yes, detach' }));
    await screen.findByText('This agent gate has no sub-gates yet.');
    expect(graphql.sent.filter((call) => call.operation === 'DetachSubGate').map((c) => c.variables)).toEqual(
      [{ gateId: AGENT_ID, subGateId: SEARCH_ID }],
    );
  });
});
