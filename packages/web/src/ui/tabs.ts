import type { KeyboardEvent } from 'react';

const MOVES: Record<string, (index: number, count: number) => number> = {
  ArrowRight: (index, count) => (index + 1) % count,
  ArrowLeft: (index, count) => (index - 1 + count) % count,
  Home: () => 0,
  End: (_, count) => count - 1,
};

/**
 * The keyboard of a role="tablist" (WAI-ARIA tabs pattern): Left and Right go to the previous and
 * next tab, wrapping, Home and End to the first and last, each one focused and opened at once.
 * Put it on the tablist's onKeyDown; with it, only the selected tab takes a place in the Tab order
 * (tabIndex 0, the others -1).
 */
export function onTabListKeyDown(event: KeyboardEvent<HTMLElement>) {
  const move = MOVES[event.key];
  if (!move) return;
  const tabs = [...event.currentTarget.querySelectorAll<HTMLElement>('[role="tab"]')];
  const index = tabs.indexOf(event.target as HTMLElement);
  if (index < 0) return;
  event.preventDefault();
  const next = tabs[move(index, tabs.length)];
  next?.focus();
  next?.click();
}
