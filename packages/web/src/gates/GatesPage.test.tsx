import { render, screen, within } from '@testing-library/react';
import { Client, fetchExchange, Provider } from 'urql';
import { describe, expect, it } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { GatesPage } from './GatesPage.tsx';
import { storedGate } from './storedGate.testing.ts';

const support = storedGate();
const agent = storedGate({
  id: '7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f',
  name: 'Coding agent',
  gateType: 'AGENT',
});

const sent: { operation: string; variables: Record<string, unknown> }[] = [];

/**
 * The GraphQL server as a test double: one page holding a standard gate and an agent gate, and
 * the support gate's figures (the agent had no traffic).
 */
async function graphqlFetch(_url: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const body = JSON.parse(String(init?.body)) as { query: string; variables: Record<string, unknown> };
  const operation = /(?:query|mutation)\s+(\w+)/.exec(body.query)?.[1] ?? '';
  sent.push({ operation, variables: body.variables });
  const stats = {
    gateStats: [
      {
        __typename: 'GateStats',
        gateId: support.id,
        requests: 1234,
        errors: 56,
        costUsd: 7.5,
        p50LatencyMs: 420,
        p95LatencyMs: 1800,
      },
    ],
  };
  const data =
    operation === 'GateStats'
      ? stats
      : operation === 'Gates'
        ? {
            gates: {
              __typename: 'QueryGatesConnection',
              edges: [support, agent].map((node) => ({ __typename: 'QueryGatesConnectionEdge', node })),
              pageInfo: {
                __typename: 'PageInfo',
                hasNextPage: false,
                hasPreviousPage: false,
                startCursor: null,
                endCursor: null,
              },
            },
          }
        : null;
  return new Response(JSON.stringify(data ? { data } : { errors: [{ message: `no ${operation} here` }] }), {
    headers: { 'content-type': 'application/json' },
  });
}

describe('the gates list', () => {
  it('marks agent gates with an "agent" badge, and only them', async () => {
    const client = new Client({
      url: 'http://gatehouse.test/graphql',
      exchanges: [fetchExchange],
      fetch: graphqlFetch as typeof fetch,
      preferGetMethod: false,
    });
    const location = memoryLocation({ path: '/gates' });
    render(
      <Provider value={client}>
        <Router hook={location.hook} searchHook={location.searchHook}>
          <GatesPage />
        </Router>
      </Provider>,
    );
    const rowOf = (name: string) => screen.getByRole('link', { name }).closest('tr') as HTMLElement;
    await screen.findByRole('link', { name: 'Coding agent' });
    expect(within(rowOf('Coding agent')).getByText('agent', { selector: '.badge' })).toBeTruthy();
    expect(within(rowOf('Support bot')).queryByText('agent', { selector: '.badge' })).toBeNull();
  });

  it('shows each gate’s requests, errors, cost and p50/p95 over 24 hours, from one query for the page', async () => {
    sent.length = 0;
    const client = new Client({
      url: 'http://gatehouse.test/graphql',
      exchanges: [fetchExchange],
      fetch: graphqlFetch as typeof fetch,
      preferGetMethod: false,
    });
    const location = memoryLocation({ path: '/gates' });
    render(
      <Provider value={client}>
        <Router hook={location.hook} searchHook={location.searchHook}>
          <GatesPage />
        </Router>
      </Provider>,
    );
    const requests = await screen.findByRole('link', { name: '1,234' });
    expect(requests.getAttribute('href')).toBe(`/logs?gateId=${support.id}&range=24h`);
    const cells = (name: string) =>
      Array.from(
        (screen.getByRole('link', { name }).closest('tr') as HTMLElement).querySelectorAll('td'),
        (cell) => cell.textContent,
      );
    expect(cells('Support bot').slice(5, 9)).toEqual(['1,234', '56', '$7.50', '420 ms / 1,800 ms']);
    expect(cells('Coding agent').slice(5, 9)).toEqual(['0', '0', '$0.00', '—']);
    const statsQueries = sent.filter((call) => call.operation === 'GateStats');
    expect(statsQueries).toHaveLength(1);
    expect(statsQueries[0]?.variables.gateIds).toEqual([support.id, agent.id]);
  });
});
