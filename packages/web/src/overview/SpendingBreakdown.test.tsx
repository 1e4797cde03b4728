import { render, screen, within } from '@testing-library/react';
import type { FragmentOf } from 'gql.tada';
import { describe, expect, it } from 'vitest';
import { type SpendingBreakdownFragment, SpendingPanels } from './SpendingBreakdown.tsx';

type Breakdown = FragmentOf<typeof SpendingBreakdownFragment>;
// Fragment masking is a type; at run time the breakdown is the plain object the query returned.
const breakdown = (b: unknown) => b as Breakdown;

const KEY = '9d1f2e3a-4b5c-4d6e-8f70-8a9b0c1d2e3f';
const GATE = '1f2e3d4c-5b6a-4789-8abc-def012345678';

describe('the overview’s spending panels', () => {
  it('list the top keys and end users with their figures, each linked to its logs, and the rest as other', () => {
    render(
      <SpendingPanels
        timeWindow="7d"
        byGate={breakdown({
          top: [
            {
              id: GATE,
              name: 'support bot',
              requests: 50,
              errors: 7,
              costUsd: 1.5,
              p50LatencyMs: 420,
              p95LatencyMs: 2100,
            },
          ],
          other: { count: 0, requests: 0, errors: 0, costUsd: 0 },
        })}
        byModel={breakdown({
          top: [
            {
              id: 'openai/gpt-4o',
              name: null,
              requests: 50,
              errors: 7,
              costUsd: 1.5,
              p50LatencyMs: 1,
              p95LatencyMs: 2,
            },
          ],
          other: { count: 0, requests: 0, errors: 0, costUsd: 0 },
        })}
        byKey={breakdown({
          top: [
            { id: KEY, name: 'batch job', requests: 1200, costUsd: 12.5 },
            { id: null, name: null, requests: 3, costUsd: 0.01 },
          ],
          other: { count: 0, requests: 0, costUsd: 0 },
        })}
        byEndUser={breakdown({
          top: [{ id: 'customer-42', name: null, requests: 40, costUsd: 2 }],
          other: { count: 3, requests: 9, costUsd: 0.75 },
        })}
      />,
    );
    // By gate and by model: requests, errors, cost and p50/p95, each linked to its logs.
    const gates = within(screen.getByRole('region', { name: 'By gate' }));
    const gate = gates.getByRole('link', { name: 'support bot' });
    expect(gate.getAttribute('href')).toBe(`/logs?gateId=${GATE}&range=7d`);
    expect(
      Array.from((gate.closest('tr') as HTMLElement).querySelectorAll('td'), (cell) => cell.textContent),
    ).toEqual(['support bot', '50', '7', '$1.50', '420 ms / 2,100 ms']);
    const models = within(screen.getByRole('region', { name: 'By model' }));
    expect(models.getByRole('link', { name: 'openai/gpt-4o' }).getAttribute('href')).toBe(
      '/logs?model=openai%2Fgpt-4o&range=7d',
    );

    const keys = within(screen.getByRole('region', { name: 'Spending by API key' }));
    const batch = keys.getByRole('link', { name: 'batch job' });
    expect(batch.getAttribute('href')).toBe(`/logs?apiKeyId=${KEY}&range=7d`);
    const batchRow = batch.closest('tr') as HTMLElement;
    expect(batchRow.textContent).toContain('1,200');
    expect(batchRow.textContent).toContain('$12.50');
    expect(keys.getByText('No key (the dashboard)').closest('a')).toBeNull();
    expect(keys.queryByText(/^Other/)).toBeNull();

    const users = within(screen.getByRole('region', { name: 'Spending by end user' }));
    expect(users.getByRole('link', { name: 'customer-42' }).getAttribute('href')).toBe(
      '/logs?endUser=customer-42&range=7d',
    );
    const other = users.getByText('Other (3 more)').closest('tr') as HTMLElement;
    expect(other.textContent).toContain('9');
    expect(other.textContent).toContain('$0.75');
  });

  it('say when the window has none', () => {
    const none = breakdown({ top: [], other: { count: 0, requests: 0, costUsd: 0 } });
    render(<SpendingPanels timeWindow="24h" byGate={none} byModel={none} byKey={none} byEndUser={none} />);
    expect(screen.getAllByText('None in this window.')).toHaveLength(4);
  });
});
