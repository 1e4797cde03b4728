import type { CombinedError } from 'urql';

export function Loading({ what }: { what: string }) {
  return (
    <p className="status" role="status">
      Loading {what}…
    </p>
  );
}

/** An unexpected failure (network, server, masked error), with a way to try again. */
export function ErrorBanner({ error, onRetry }: { error: CombinedError; onRetry?: () => void }) {
  const message = error.networkError
    ? 'Gatehouse could not be reached. Check that the server is running.'
    : (error.graphQLErrors[0]?.message ?? error.message);
  return (
    <div className="banner error" role="alert">
      <span>{message}</span>
      {onRetry && (
        <button type="button" className="button subtle" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}
