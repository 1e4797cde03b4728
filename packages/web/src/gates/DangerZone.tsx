import { type FormEvent, useId, useState } from 'react';

/** Deleting a gate for good, once its exact name has been typed. */
export function DangerZone({
  gateName,
  onDelete,
}: {
  gateName: string;
  /** Deletes the gate; resolves to a message when it could not. */
  onDelete: () => Promise<string | null>;
}) {
  const [typed, setTyped] = useState('');
  const [deleting, setDeleting] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const inputId = useId();
  const confirmed = typed === gateName;

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    if (!confirmed) return;
    setDeleting(true);
    const failure = await onDelete();
    setDeleting(false);
    setProblem(failure);
  };

  return (
    <section className="danger-zone" aria-labelledby={`${inputId}-title`}>
      <h2 id={`${inputId}-title`}>Delete this gate</h2>
      <p>
        Deleting a gate cannot be undone. Applications that call it get 404 from then on; its log entries
        stay, without the link to the gate. An agent gate that uses it as a sub-gate is detached from it (see
        Connections).
      </p>
      <form onSubmit={onSubmit} className="form">
        {problem && (
          <div className="banner error" role="alert">
            {problem}
          </div>
        )}
        <div className="field">
          <label htmlFor={inputId}>
            Type <strong className="mono">{gateName}</strong> to confirm
          </label>
          <input
            id={inputId}
            autoComplete="off"
            spellCheck={false}
            value={typed}
            onChange={(event) => setTyped(event.target.value)}
          />
        </div>
        <div className="actions start">
          <button type="submit" className="button danger" disabled={!confirmed || deleting}>
            {deleting ? 'Deleting…' : 'Delete this gate'}
          </button>
        </div>
      </form>
    </section>
  );
}
