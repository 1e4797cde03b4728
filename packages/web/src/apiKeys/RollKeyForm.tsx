import { MAX_ROLL_GRACE_SECONDS } from '@gatehouse/rules/account';
import { useState } from 'react';

/** How long the old secret may keep working, as the dashboard offers it (the API takes any 0–86400 s). */
export const GRACE_CHOICES = [
  { seconds: 0, label: 'Not at all: refuse it now' },
  { seconds: 300, label: '5 minutes' },
  { seconds: 3600, label: '1 hour' },
  { seconds: MAX_ROLL_GRACE_SECONDS, label: '24 hours' },
] as const;

/**
 * Asks how long the key's current secret keeps working, then rolls it; the page shows the new
 * secret once. `onRoll` answers null when rolled, or the message to show.
 */
export function RollKeyForm({
  name,
  idPrefix,
  onRoll,
  onCancel,
}: {
  name: string;
  idPrefix: string;
  onRoll: (graceSeconds: number) => Promise<string | null>;
  onCancel: () => void;
}) {
  const [grace, setGrace] = useState<number>(3600);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = `${idPrefix}-grace`;
  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(await onRoll(grace));
    setBusy(false);
  };
  return (
    <form className="inline-form" aria-label={`Roll ${name}`} onSubmit={submit} noValidate>
      {error && (
        <div className="banner error" role="alert">
          {error}
        </div>
      )}
      <p>
        Roll <strong>{name}</strong>: the key gets a new secret, shown once; its settings, spending and logs
        stay.
      </p>
      <div className="field">
        <label htmlFor={id}>Keep the current secret working for</label>
        <select id={id} value={grace} onChange={(e) => setGrace(Number(e.target.value))}>
          {GRACE_CHOICES.map((choice) => (
            <option key={choice.seconds} value={choice.seconds}>
              {choice.label}
            </option>
          ))}
        </select>
      </div>
      <div className="actions">
        <button type="button" className="button subtle" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? 'Rolling…' : 'Roll key'}
        </button>
      </div>
    </form>
  );
}
