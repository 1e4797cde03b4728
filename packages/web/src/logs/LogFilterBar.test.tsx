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

  it('searches the words typed when asked, keeping the other filters', async () => {
    const user = userEvent.setup();
    const onChange = vi.fn();
    render(<LogFilterBar filters={{ status: 'failed' }} gates={[]} onChange={onChange} />);
    await user.type(screen.getByLabelText('Search prompts, answers and errors'), ' late parcel ');
    expect(onChange).not.toHaveBeenCalled();
    await user.click(screen.getByRole('button', { name: 'Search' }));
    expect(onChange).toHaveBeenLastCalledWith({ status: 'failed', q: 'late parcel' });
  });

  it('filters by model, error code, failure class, streamed, tool calls and metadata', async () => {
    const user = userEvent.setup();
    const onChange = vi.fn();
    const { rerender } = render(<LogFilterBar filters={{}} gates={[]} onChange={onChange} />);
    await user.type(screen.getByLabelText('Model'), 'openai/gpt-4o{Enter}');
    expect(onChange).toHaveBeenLastCalledWith({ model: 'openai/gpt-4o' });
    await user.type(screen.getByLabelText('Error code'), 'rate_limited{Enter}');
    expect(onChange).toHaveBeenLastCalledWith({ errorCode: 'rate_limited' });
    await user.selectOptions(screen.getByLabelText('Failure'), 'Rate limit');
    expect(onChange).toHaveBeenLastCalledWith({ failureClass: 'rate_limit' });
    await user.selectOptions(screen.getByLabelText('Streamed'), 'Not streamed');
    expect(onChange).toHaveBeenLastCalledWith({ streamed: 'false' });
    await user.selectOptions(screen.getByLabelText('Tool calls'), 'With tool calls');
    expect(onChange).toHaveBeenLastCalledWith({ hasToolCalls: 'true' });
    // The value field appears once there is a key to look under.
    expect(screen.queryByLabelText('Metadata value')).toBeNull();
    rerender(<LogFilterBar filters={{ metadataKey: 'team' }} gates={[]} onChange={onChange} />);
    await user.type(screen.getByLabelText('Metadata value'), 'billing{Enter}');
    expect(onChange).toHaveBeenLastCalledWith({ metadataKey: 'team', metadataValue: 'billing' });
  });

  it('opens the entry of a pasted request id, and says so when it is none', async () => {
    const user = userEvent.setup();
    const onOpenEntry = vi.fn();
    render(<LogFilterBar filters={{}} gates={[]} onChange={vi.fn()} onOpenEntry={onOpenEntry} />);
    const box = screen.getByLabelText('Request id');
    await user.type(box, 'not-an-id{Enter}');
    expect(onOpenEntry).not.toHaveBeenCalled();
    expect(screen.getByRole('alert').textContent).toContain('A request id looks like');
    await user.clear(box);
    await user.type(box, `${apiKeys[0]?.id}{Enter}`);
    expect(onOpenEntry).toHaveBeenCalledWith(apiKeys[0]?.id);
    expect(screen.queryByRole('alert')).toBeNull();
  });
});
