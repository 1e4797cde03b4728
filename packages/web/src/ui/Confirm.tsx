import { type ReactNode, useState } from 'react';

/**
 * The state of an action taken only after confirmation: `act` resolves to a message when it could
 * not be done, which stays shown with the confirmation; done, the confirmation closes.
 */
export function useConfirmation(act: () => Promise<string | null>) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const confirm = async () => {
    setBusy(true);
    const failure = await act();
    setBusy(false);
    setProblem(failure);
    if (!failure) setConfirming(false);
  };
  return {
    confirming,
    busy,
    problem,
    ask: () => setConfirming(true),
    cancel: () => setConfirming(false),
    confirm,
  };
}

export type Confirmation = ReturnType<typeof useConfirmation>;

/** The button that asks for the confirmation (`children` is its label); hidden while it is asked. */
export function AskButton({ confirmation, children }: { confirmation: Confirmation; children: ReactNode }) {
  if (confirmation.confirming) return null;
  return (
    <button type="button" className="button subtle" onClick={confirmation.ask}>
      {children}
    </button>
  );
}

/**
 * While the confirmation is asked: the question, Cancel, and the button that acts (`busyAction`
 * while it runs), as an alert dialog.
 */
export function ConfirmPanel({
  confirmation,
  label,
  question,
  action,
  busyAction,
}: {
  confirmation: Confirmation;
  /** The dialog's accessible name. */
  label: string;
  question: ReactNode;
  action: string;
  busyAction: string;
}) {
  const { confirming, busy, problem, cancel, confirm } = confirmation;
  if (!confirming) return null;
  return (
    <div className="confirm" role="alertdialog" aria-label={label}>
      <span>{question}</span>
      <span className="confirm-actions">
        <button type="button" className="button subtle" onClick={cancel} disabled={busy}>
          Cancel
        </button>
        <button type="button" className="button danger" onClick={confirm} disabled={busy}>
          {busy ? busyAction : action}
        </button>
      </span>
      {problem && (
        <p className="field-error" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}

/** The confirmation as a table row below the row it acts on, spanning its `columns`. */
export function ConfirmRow({ columns, ...panel }: Parameters<typeof ConfirmPanel>[0] & { columns: number }) {
  if (!panel.confirmation.confirming) return null;
  return (
    <tr className="confirm-row">
      <td colSpan={columns}>
        <ConfirmPanel {...panel} />
      </td>
    </tr>
  );
}
