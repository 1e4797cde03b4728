import { useState } from 'react';

type CopyState = 'idle' | 'copied' | 'failed';

/** A secret shown once: the user copies it now or never sees it again. */
export function ApiKeyReveal({
  apiKey,
  name,
  onContinue,
  continueLabel = 'Continue to gates',
}: {
  apiKey: string;
  name: string;
  onContinue: () => void;
  continueLabel?: string;
}) {
  const [copy, setCopy] = useState<CopyState>('idle');
  const onCopy = async () => {
    try {
      await navigator.clipboard.writeText(apiKey);
      setCopy('copied');
    } catch {
      setCopy('failed');
    }
  };
  return (
    <div className="reveal">
      <div className="banner warning">
        Copy this key now and keep it somewhere safe. Gatehouse stores only a hash of it, so it will not be
        shown again.
      </div>
      <label htmlFor="api-key">API key “{name}”</label>
      <div className="copy-row">
        <input
          id="api-key"
          className="mono"
          readOnly
          value={apiKey}
          onFocus={(event) => event.currentTarget.select()}
        />
        <button type="button" className="button" onClick={onCopy}>
          {copy === 'copied' ? 'Copied' : 'Copy'}
        </button>
      </div>
      {copy === 'failed' && (
        <p className="field-error" role="alert">
          The browser refused to copy; select the key and copy it by hand.
        </p>
      )}
      <p className="muted">
        Send it as <code>Authorization: Bearer &lt;key&gt;</code> with requests to <code>/v1</code> and{' '}
        <code>/v3</code>.
      </p>
      <button type="button" className="button primary wide" onClick={onContinue}>
        {continueLabel}
      </button>
    </div>
  );
}
