import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { LogFilterBar } from './LogFilterBar.tsx';

const apiKeys = [
  { id: '9d1f2e3a-4b5c-4d6e-8f70-8a9b0c1d2e3f', name: 'batch job' },
  { id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d', name: 'web app' },
];

describe('the log filter bar', () => {
  it('filters by API key, keeping the other filters', async () => {
    const user = userEvent.setup();
    const onChange = vi.fn();
    render(<LogFilterBar filters={{ status: 'failed' }} gates={[]} apiKeys={apiKeys} onChange={onChange} />);
    await user.selectOptions(screen.getByLabelText('API key'), 'web app');
    expect(onChange).toHaveBeenLastCalledWith({ status: 'failed', apiKeyId: apiKeys[1]?.id });
  });

  it('filters by end user once it is typed and entered, not at each keystroke', async () => {
    const user = userEvent.setup();
    const onChange = vi.fn();
    render(<LogFilterBar filters={{}} gates={[]} apiKeys={apiKeys} onChange={onChange} />);
    await user.type(screen.getByLabelText('End user'), 'customer-42');
    expect(onChange).not.toHaveBeenCalled();
    await user.keyboard('{Enter}');
    expect(onChange).toHaveBeenCalledTimes(1);
    expect(onChange).toHaveBeenLastCalledWith({ endUser: 'customer-42' });
  });

  it('shows the filters the address holds, and clearing the end user drops it', async () => {
    const user = userEvent.setup();
    const onChange = vi.fn();
    render(
      <LogFilterBar
        filters={{ apiKeyId: apiKeys[0]?.id, endUser: 'ann' }}
        gates={[]}
        apiKeys={apiKeys}
        onChange={onChange}
      />,
    );
    expect((screen.getByLabelText('API key') as HTMLSelectElement).selectedOptions[0]?.textContent).toBe(
      'batch job',
    );
    const endUser = screen.getByLabelText('End user');
    expect(endUser).toHaveProperty('value', 'ann');
    await user.clear(endUser);
    await user.tab();
    expect(onChange).toHaveBeenLastCalledWith({ apiKeyId: apiKeys[0]?.id });
  });
});
