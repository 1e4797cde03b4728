import { type ReactNode, useEffect, useRef, useState } from 'react';
import { useQuery } from 'urql';
import { graphql } from '../graphql.ts';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { useMediaQuery } from '../ui/useMediaQuery.ts';
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

/** Where the panel takes the whole window (styles.css): a phone or a narrow tablet. */
const COVERS_THE_WINDOW = '(max-width: 960px)';

/**
 * The entry the address names, in a panel beside the table; Escape or × closes it. Opening it
 * moves focus into it (a keyboard or screen-reader user lands on what they opened); closing it
 * gives focus back to where it was, the entry's row. Where it covers the window, the top bar
 * included, it is a modal dialog: Tab stays inside it and the page behind is inert until it closes.
 */
export function LogEntryPanel({ id, onClose }: { id: string; onClose: () => void }) {
  // Asked again each time it opens: an entry gains replays after it was first read.
  const [{ data, fetching, error }, refetch] = useQuery({
    query: LogEntryQuery,
    variables: { id },
    requestPolicy: 'cache-and-network',
  });
  const heading = useRef<HTMLHeadingElement>(null);
  const covers = useMediaQuery(COVERS_THE_WINDOW);

  // Read as the panel first renders: a modal frame takes the focus before the effects below run.
  const [opener] = useState(() =>
    document.activeElement instanceof HTMLElement ? document.activeElement : null,
  );

  useEffect(() => {
    heading.current?.focus();
    return () => {
      // Only when focus is still inside the panel (or lost with it): a click elsewhere keeps its own.
      const active = document.activeElement;
      if (active && active !== document.body && document.contains(active)) return;
      const row = document.querySelector<HTMLElement>(`[data-entry-id="${id}"] a, a[href*="entry=${id}"]`);
      (opener?.isConnected ? opener : row)?.focus();
    };
  }, [id, opener]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') onClose();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);

  const entry = data?.log;
  const Frame = covers ? ModalFrame : SideFrame;
  return (
    <Frame onShown={() => heading.current?.focus()}>
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
    </Frame>
  );
}

type FrameProps = { children: ReactNode; onShown: () => void };

function SideFrame({ children }: FrameProps) {
  return (
    <aside className="entry-panel" aria-label="Log entry">
      {children}
    </aside>
  );
}

/** Shown modal: on top of everything, the rest of the page inert; Escape still closes it by the panel's handler. */
function ModalFrame({ children, onShown }: FrameProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: shown once, when the frame appears.
  useEffect(() => {
    const shown = dialog.current;
    if (!shown || shown.open) return;
    shown.showModal();
    onShown();
    return () => shown.close();
  }, []);
  return (
    <dialog
      ref={dialog}
      className="entry-panel"
      aria-label="Log entry"
      // The panel's own Escape handler closes it, through the address: the browser's close would not.
      onCancel={(event) => event.preventDefault()}
    >
      {children}
    </dialog>
  );
}
