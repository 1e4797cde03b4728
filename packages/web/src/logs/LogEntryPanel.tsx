import { useEffect, useRef } from 'react';
import { useQuery } from 'urql';
import { graphql } from '../graphql.ts';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { LogEntryFragment, LogEntryView } from './LogEntryView.tsx';

const LogEntryQuery = graphql(
  `
  query LogEntry($id: ID!) {
    log(id: $id) {
      id
      ...LogEntryDetail
    }
  }
`,
  [LogEntryFragment],
);

/**
 * The entry the address names, in a panel beside the table; Escape or × closes it. Opening it
 * moves focus into it (a keyboard or screen-reader user lands on what they opened); closing it
 * gives focus back to where it was, the entry's row.
 */
export function LogEntryPanel({ id, onClose }: { id: string; onClose: () => void }) {
  // Asked again each time it opens: an entry gains replays after it was first read.
  const [{ data, fetching, error }, refetch] = useQuery({
    query: LogEntryQuery,
    variables: { id },
    requestPolicy: 'cache-and-network',
  });
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    heading.current?.focus();
    return () => {
      // Only when focus is still inside the panel (or lost with it): a click elsewhere keeps its own.
      const active = document.activeElement;
      if (active && active !== document.body && document.contains(active)) return;
      const row = document.querySelector<HTMLElement>(`[data-entry-id="${id}"] a, a[href*="entry=${id}"]`);
      (opener?.isConnected ? opener : row)?.focus();
    };
  }, [id]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') onClose();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);

  const entry = data?.log;
  return (
    <aside className="entry-panel" aria-label="Log entry">
      <div className="entry-panel-header">
        <h2 ref={heading} tabIndex={-1}>
          Log entry
        </h2>
        <button type="button" className="button subtle small" onClick={onClose} aria-label="Close the entry">
          ×
        </button>
      </div>
      {error && <ErrorBanner error={error} onRetry={() => refetch({ requestPolicy: 'network-only' })} />}
      {fetching && !entry && <Loading what="the entry" />}
      {data && !entry && !fetching && (
        <div className="empty">
          <h3>No such entry</h3>
          <p className="muted">
            This log entry does not exist, belongs to someone else, or is older than your plan keeps logs.
          </p>
        </div>
      )}
      {entry && <LogEntryView entry={entry} />}
    </aside>
  );
}
