/**
 * Spending alerts in Settings: the default webhook (for gates without one of their own), the
 * secret deliveries are signed with (shown on demand, rotatable), and every delivery.
 */
import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../graphql.ts';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { useUnsavedChanges } from '../ui/unsavedChanges.ts';
import { AlertDeliveries } from './AlertDeliveries.tsx';

const AlertSettingsQuery = graphql(`
  query SpendingAlertSettings {
    spendingAlertSettings {
      defaultWebhook
      signingSecret
    }
  }
`);

const SetWebhookMutation = graphql(`
  mutation SetSpendingAlertWebhook($url: String) {
    setSpendingAlertWebhook(url: $url) {
      __typename
      ... on MutationSetSpendingAlertWebhookSuccess {
        data {
          defaultWebhook
          signingSecret
        }
      }
      ... on ValidationError {
        message
        issues {
          path
          message
        }
      }
    }
  }
`);

const RotateSecretMutation = graphql(`
  mutation RotateWebhookSigningSecret {
    rotateWebhookSigningSecret {
      defaultWebhook
      signingSecret
    }
  }
`);

export function SpendingAlertsCard() {
  const [{ data, fetching, error }, refetch] = useQuery({ query: AlertSettingsQuery });
  const settings = data?.spendingAlertSettings;
  // Held here: a saved webhook comes back in the refetched settings and remounts the form (its key).
  const [saved, setSaved] = useState(false);
  return (
    <section className="card" aria-labelledby="alerts-title">
      <p className="eyebrow">Spending alerts</p>
      <h2 id="alerts-title">Alert webhook</h2>
      <p className="muted small">
        When a gate's alert-only limit is crossed, Gatehouse POSTs a JSON alert, once per period, to the
        gate's own webhook or else to this one, signed in <code>x-gatehouse-signature</code> (sha256= and the
        HMAC-SHA256 of <code>timestamp.body</code> with the secret below; the timestamp is in{' '}
        <code>x-gatehouse-timestamp</code>). A failed delivery is retried with growing delays.
      </p>
      {error && !data && (
        <ErrorBanner error={error} onRetry={() => refetch({ requestPolicy: 'network-only' })} />
      )}
      {!data && fetching && <Loading what="alert settings" />}
      {settings && (
        <WebhookForm
          key={settings.defaultWebhook ?? ''}
          current={settings.defaultWebhook}
          saved={saved}
          setSaved={setSaved}
        />
      )}
      {settings && <SigningSecret secret={settings.signingSecret} />}
      <AlertDeliveries />
    </section>
  );
}

function WebhookForm({
  current,
  saved,
  setSaved,
}: {
  current: string | null;
  saved: boolean;
  setSaved: (saved: boolean) => void;
}) {
  const [url, setUrl] = useState(current ?? '');
  // What the server holds: the field differs from it until saved.
  const [stored, setStored] = useState(current ?? '');
  useUnsavedChanges(url.trim() !== stored);
  const [problem, setProblem] = useState<string | null>(null);
  const [{ fetching }, setWebhook] = useMutation(SetWebhookMutation);
  const save = async (event: React.FormEvent) => {
    event.preventDefault();
    setSaved(false);
    const result = await setWebhook({ url: url.trim() === '' ? null : url.trim() });
    const answer = result.data?.setSpendingAlertWebhook;
    if (answer?.__typename === 'MutationSetSpendingAlertWebhookSuccess') {
      setStored(url.trim());
      setProblem(null);
      setSaved(true);
      return;
    }
    const fieldError = answer && 'issues' in answer ? answer.issues[0]?.message : undefined;
    setProblem(
      fieldError ? `The webhook ${fieldError}` : (result.error?.message ?? 'The webhook could not be saved.'),
    );
  };
  return (
    <form className="webhook-form" onSubmit={save} noValidate>
      <div className={problem ? 'field invalid' : 'field'}>
        <label htmlFor="default-webhook">Default webhook</label>
        <input
          id="default-webhook"
          type="url"
          inputMode="url"
          placeholder="https://example.com/hooks/spending"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          {...(problem && { 'aria-invalid': true, 'aria-describedby': 'default-webhook-error' })}
        />
        {problem ? (
          <p className="field-error" id="default-webhook-error" role="alert">
            {problem}
          </p>
        ) : (
          <p className="hint">Blank: gates without a webhook of their own send no alert.</p>
        )}
      </div>
      <button type="submit" className="button" disabled={fetching}>
        {fetching ? 'Saving…' : 'Save webhook'}
      </button>
      {saved && (
        <span className="muted small" role="status">
          {' '}
          Saved.
        </span>
      )}
    </form>
  );
}

function SigningSecret({ secret: stored }: { secret: string }) {
  const [shown, setShown] = useState(false);
  const [rotated, setRotated] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [{ fetching }, rotate] = useMutation(RotateSecretMutation);
  const secret = rotated ?? stored;
  return (
    <div className="signing-secret">
      <p>
        <label htmlFor="signing-secret">Signing secret</label>{' '}
        <input
          id="signing-secret"
          className="mono"
          type={shown ? 'text' : 'password'}
          readOnly
          value={secret}
          size={40}
        />{' '}
        <button type="button" className="button subtle" onClick={() => setShown((s) => !s)}>
          {shown ? 'Hide' : 'Show'}
        </button>{' '}
        <button
          type="button"
          className="button subtle"
          disabled={fetching}
          onClick={async () => {
            const result = await rotate({});
            const next = result.data?.rotateWebhookSigningSecret.signingSecret;
            setProblem(next ? null : (result.error?.message ?? 'The secret could not be rotated.'));
            if (next) {
              setRotated(next);
              setShown(true);
            }
          }}
        >
          {fetching ? 'Rotating…' : 'Rotate'}
        </button>
      </p>
      {problem && (
        <p className="banner error" role="alert">
          {problem}
        </p>
      )}
      <p className="muted small">
        Rotating signs every delivery from now on, retries included, with the new secret.
      </p>
    </div>
  );
}
