import { render, screen } from '@testing-library/react';
import type { FragmentOf } from 'gql.tada';
import { describe, expect, it } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import type { ResultOf } from '../graphql.ts';
import { type LogRowFragment, LogsTable } from './LogsTable.tsx';

type Row = ResultOf<typeof LogRowFragment>;

const row: Row = {
  id: '5e2d7f0a-1b3c-4d5e-8f90-a1b2c3d4e5f6',
  gateId: '0b6f3c1e-8a0d-4a8e-9a61-2f1d3c4b5a69',
  gateName: 'Support bot',
  modelRequested: 'mock/echo',
  modelUsed: 'mock/echo',
  promptTokens: 12,
  completionTokens: 5,
  totalTokens: 17,
  tokensEstimated: false,
  costUsd: 0.0001,
  latencyMs: 42,
  success: true,
  statusCode: 200,
  errorCode: null,
  createdAt: '2026-11-27T10:41:03.512Z',
};

describe('the log table', () => {
  it('shows each request’s time in UTC, and says so', () => {
    const location = memoryLocation({ path: '/logs' });
    render(
      <Router hook={location.hook} searchHook={location.searchHook}>
        <LogsTable
          entries={[row as unknown as FragmentOf<typeof LogRowFragment>]}
          entryHref={(id) => `/logs?entry=${id}`}
          caption="Requests"
        />
      </Router>,
    );
    expect(screen.getByRole('link', { name: '2026-11-27 10:41:03 UTC' }).getAttribute('href')).toBe(
      `/logs?entry=${row.id}`,
    );
  });
});
