import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Client, fetchExchange, Provider } from 'urql';
import { describe, expect, it, vi } from 'vitest';
import type { GateDetailData } from './gateDetail.ts';
import { History } from './History.tsx';

const GATE_ID = '8d0b7a52-3f4e-4c1a-9f0e-2b6c1d5e7a90';
const EMAIL = 'owner@example.test';
const LONG_PROMPT = `You are a support agent for a shop. ${'Answer politely and briefly. '.repeat(6)}END`;

type Variables = Record<string, unknown>;
type Node = Record<string, unknown> & { id: string; version: number };

const node = (version: number, fields: Record<string, unknown>): Node => ({
  __typename: 'GateVersion',
  id: `00000000-0000-4000-8000-00000000000${version}`,
  version,
  changedBy: 'USER',
  actorEmail: EMAIL,
  rolledBackToVersion: null,
  createdAt: `2026-11-2${version}T10:00:00.000Z`,
  ...fields,
});
const change = (field: string, from: unknown, to: unknown) => ({
  __typename: 'GateFieldChange',
  field,
  from,
  to,
});

/** The GraphQL server as a test double: three versions until rollbackGate adds a fourth. */
function fakeGraphQL() {
  const versions: Node[] = [
    node(3, {
      changedBy: 'ARCHITECT',
      actorEmail: null,
      changes: [change('model', 'mock/echo', 'mock/smart'), change('fallbackModels', [], ['mock/fast'])],
    }),
    node(2, { changes: [change('temperature', 0.2, 0.7), change('systemPrompt', null, LONG_PROMPT)] }),
    node(1, { changes: [change('name', null, 'support'), change('model', null, 'mock/echo')] }),
  ];
  const sent: { operation: string; variables: Variables }[] = [];
  const fetch = vi.fn(async (_url: RequestInfo | URL, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body)) as { query: string; variables: Variables };
    const operation = /(?:query|mutation)\s+(\w+)/.exec(body.query)?.[1] ?? '';
    sent.push({ operation, variables: body.variables });
    let data: unknown = null;
    if (operation === 'GateHistory') {
      data = {
        gate: {
          __typename: 'Gate',
          id: GATE_ID,
          history: {
            __typename: 'GateHistoryConnection',
            edges: versions.map((n) => ({ __typename: 'GateHistoryConnectionEdge', node: n })),
            pageInfo: { __typename: 'PageInfo', hasNextPage: false },
          },
        },
      };
    }
    if (operation === 'RollbackGate') {
      versions.unshift(
        node(4, {
          changedBy: 'ROLLBACK',
          rolledBackToVersion: 1,
          changes: [change('temperature', 0.7, null), change('model', 'mock/smart', 'mock/echo')],
        }),
      );
      data = {
        rollbackGate: {
          __typename: 'MutationRollbackGateSuccess',
          data: { __typename: 'Gate', id: GATE_ID, name: 'support', model: 'mock/echo' },
        },
      };
    }
    return new Response(JSON.stringify({ data }), { headers: { 'content-type': 'application/json' } });
  });
  return { fetch, sent };
}

function renderHistory(
  graphql: ReturnType<typeof fakeGraphQL>,
  onRolledBack: (gate: GateDetailData) => void,
) {
  const client = new Client({
    url: 'http://gatehouse.test/graphql',
    exchanges: [fetchExchange],
    fetch: graphql.fetch as typeof fetch,
    preferGetMethod: false,
  });
  render(
    <Provider value={client}>
      <History gateId={GATE_ID} active onRolledBack={onRolledBack} />
    </Provider>,
  );
}

const version = (n: number) => screen.getByRole('listitem', { name: `Version ${n}` });

describe('the History tab', () => {
  it('lists the versions newest first with who changed what, in words', async () => {
    const user = userEvent.setup();
    renderHistory(fakeGraphQL(), () => {});

    await screen.findByRole('listitem', { name: 'Version 3' });
    const items = within(screen.getByRole('list', { name: 'Versions' }))
      .getAllByRole('listitem')
      .filter((li) => li.classList.contains('version'));
    expect(items.map((li) => li.getAttribute('aria-label'))).toEqual(['Version 3', 'Version 2', 'Version 1']);

    expect(within(version(3)).getByText('by the Architect')).toBeTruthy();
    expect(version(3).textContent).toContain('model: mock/echo → mock/smart');
    expect(version(3).textContent).toContain('fallbackModels: none → mock/fast');
    expect(within(version(2)).getByText('by you')).toBeTruthy();
    expect(version(2).textContent).toContain('temperature: 0.2 → 0.7');
    // The creation lists what it set.
    expect(version(1).textContent).toContain('name: support');

    // A long prompt is cut, and shown whole on request.
    expect(version(2).textContent).not.toContain('END');
    await user.click(within(version(2)).getByRole('button', { name: 'Show all' }));
    expect(version(2).textContent).toContain(LONG_PROMPT);

    // The current version cannot be rolled back to; the others can.
    expect(within(version(3)).queryByRole('button', { name: 'Roll back to this version' })).toBeNull();
    expect(within(version(1)).getByRole('button', { name: 'Roll back to this version' })).toBeTruthy();
  });

  it('rolls back after confirmation, hands the restored gate to the form and reloads the list', async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL();
    const onRolledBack = vi.fn();
    renderHistory(graphql, onRolledBack);

    await screen.findByRole('listitem', { name: 'Version 1' });
    await user.click(within(version(1)).getByRole('button', { name: 'Roll back to this version' }));
    // Nothing is sent before the confirmation.
    expect(graphql.sent.filter((call) => call.operation === 'RollbackGate')).toEqual([]);
    const confirm = screen.getByRole('alertdialog', { name: 'Confirm rollback' });
    expect(confirm.textContent).toContain('Roll back to v1?');
    await user.click(within(confirm).getByRole('button', { name: 'Yes, roll back' }));

    const rolledBack = await screen.findByRole('listitem', { name: 'Version 4' });
    expect(within(rolledBack).getByText('rollback to v1 by you')).toBeTruthy();
    expect(rolledBack.textContent).toContain('temperature: 0.7 → none');
    expect(graphql.sent.filter((call) => call.operation === 'RollbackGate').map((c) => c.variables)).toEqual([
      { id: GATE_ID, versionId: '00000000-0000-4000-8000-000000000001' },
    ]);
    expect(onRolledBack).toHaveBeenCalledTimes(1);
    expect(onRolledBack.mock.calls[0]?.[0]).toMatchObject({ id: GATE_ID, model: 'mock/echo' });
    // The new version is the current one; the one it replaced can be rolled back to.
    expect(within(rolledBack).queryByRole('button', { name: 'Roll back to this version' })).toBeNull();
    expect(within(version(3)).getByRole('button', { name: 'Roll back to this version' })).toBeTruthy();
  });
});
