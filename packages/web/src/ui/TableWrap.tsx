import type { ReactNode } from 'react';

/**
 * The frame every table sits in. It scrolls sideways when the table is wider than the screen, so
 * it takes keyboard focus (arrow keys scroll it) and names itself: a scrolling region a keyboard
 * cannot reach is an axe finding (scrollable-region-focusable) on tables with no link inside.
 */
export function TableWrap({ label, children }: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard
    <section className="table-wrap" aria-label={`${label} table`} tabIndex={0}>
      {children}
    </section>
  );
}
