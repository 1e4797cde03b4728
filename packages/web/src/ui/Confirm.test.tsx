import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { AskButton, ConfirmPanel, ConfirmRow, useConfirmation } from './Confirm.tsx';

/** An action the test settles by hand: each call waits until the test answers it. */
function pendingAction() {
  const calls: ((failure: string | null) => void)[] = [];
  const act = () => new Promise<string | null>((resolve) => calls.push(resolve));
  return { act, calls };
}

function Remove({ act }: { act: () => Promise<string | null> }) {
  const confirmation = useConfirmation(act);
  return (
    <div>
      <AskButton confirmation={confirmation}>Remove</AskButton>
      <ConfirmPanel
        confirmation={confirmation}
        label="Confirm removal"
        question="Remove the thing?"
        action="Yes, remove"
        busyAction="Removing…"
      />
    </div>
  );
}

function RemoveRow({ act }: { act: () => Promise<string | null> }) {
  const confirmation = useConfirmation(act);
  return (
    <table>
      <tbody>
        <tr>
          <td>thing</td>
          <td>
            <AskButton confirmation={confirmation}>Remove</AskButton>
          </td>
        </tr>
        <ConfirmRow
          columns={2}
          confirmation={confirmation}
          label="Confirm removal"
          question="Remove the thing?"
          action="Yes, remove"
          busyAction="Removing…"
        />
      </tbody>
    </table>
  );
}

describe('confirm-then-act', () => {
  it('acts only once confirmed, shows that it is busy, and closes when done', async () => {
    const user = userEvent.setup();
    const action = pendingAction();
    render(<Remove act={action.act} />);
    expect(screen.queryByRole('alertdialog')).toBeNull();

    await user.click(screen.getByRole('button', { name: 'Remove' }));
    const dialog = screen.getByRole('alertdialog', { name: 'Confirm removal' });
    expect(dialog.textContent).toContain('Remove the thing?');
    // The question replaces the button that asked it, and nothing has run yet.
    expect(screen.queryByRole('button', { name: 'Remove' })).toBeNull();
    expect(action.calls).toHaveLength(0);

    await user.click(within(dialog).getByRole('button', { name: 'Yes, remove' }));
    expect(action.calls).toHaveLength(1);
    const busy = within(dialog).getByRole('button', { name: 'Removing…' }) as HTMLButtonElement;
    expect(busy.disabled).toBe(true);
    expect((within(dialog).getByRole('button', { name: 'Cancel' }) as HTMLButtonElement).disabled).toBe(true);

    action.calls[0]?.(null);
    await waitFor(() => expect(screen.queryByRole('alertdialog')).toBeNull());
    expect(screen.getByRole('button', { name: 'Remove' })).toBeTruthy();
  });

  it('cancels without acting', async () => {
    const user = userEvent.setup();
    const action = pendingAction();
    render(<Remove act={action.act} />);
    await user.click(screen.getByRole('button', { name: 'Remove' }));
    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(screen.getByRole('button', { name: 'Remove' })).toBeTruthy();
    expect(action.calls).toHaveLength(0);
  });

  it('keeps the question open with the reason when the action fails, and may be tried again', async () => {
    const user = userEvent.setup();
    const action = pendingAction();
    render(<Remove act={action.act} />);
    await user.click(screen.getByRole('button', { name: 'Remove' }));
    await user.click(screen.getByRole('button', { name: 'Yes, remove' }));
    action.calls[0]?.('The thing is in use.');

    const dialog = await screen.findByRole('alertdialog', { name: 'Confirm removal' });
    expect((await within(dialog).findByRole('alert')).textContent).toBe('The thing is in use.');
    const again = within(dialog).getByRole('button', { name: 'Yes, remove' }) as HTMLButtonElement;
    expect(again.disabled).toBe(false);

    await user.click(again);
    action.calls[1]?.(null);
    await waitFor(() => expect(screen.queryByRole('alertdialog')).toBeNull());
    expect(action.calls).toHaveLength(2);
  });

  it('asks in a table row of its own below the row it acts on, spanning its columns', async () => {
    const user = userEvent.setup();
    const action = pendingAction();
    render(<RemoveRow act={action.act} />);
    expect(screen.getAllByRole('row')).toHaveLength(1);

    await user.click(screen.getByRole('button', { name: 'Remove' }));
    const rows = screen.getAllByRole('row');
    expect(rows).toHaveLength(2);
    const cell = within(rows[1] as HTMLElement).getByRole('cell');
    expect(cell.getAttribute('colspan')).toBe('2');
    expect(within(cell).getByRole('alertdialog', { name: 'Confirm removal' })).toBeTruthy();

    await user.click(within(cell).getByRole('button', { name: 'Yes, remove' }));
    action.calls[0]?.(null);
    await waitFor(() => expect(screen.getAllByRole('row')).toHaveLength(1));
  });
});
