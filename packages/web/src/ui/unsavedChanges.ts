import { useCallback, useEffect } from 'react';
import type { BaseLocationHook } from 'wouter';

/**
 * Unsaved edits ask before they are dropped: a form with edits registers itself here while it
 * has them; leaving its page inside the app (a link, a redirect, Back) asks first, and closing
 * or reloading the tab gets the browser's own `beforeunload` question.
 */
const editing = new Map<symbol, string>();
let allowOnce = false;

export const LEAVE_QUESTION = 'You have unsaved changes. Leave this page and drop them?';
export const DROP_QUESTION = 'You have unsaved changes. Drop them?';
/** A new API key's secret on screen: it is never shown again. */
export const SECRET_QUESTION = 'Your new key is shown only on this page. Leave it without the key?';

/** While `dirty`, leaving the page asks first: `question`, the first one registered when several are. */
export function useUnsavedChanges(dirty: boolean, question: string = LEAVE_QUESTION): void {
  useEffect(() => {
    if (!dirty) return;
    const token = Symbol('unsaved edits');
    editing.set(token, question);
    const onBeforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      // Older browsers ask only when returnValue is set.
      event.returnValue = '';
    };
    window.addEventListener('beforeunload', onBeforeUnload);
    return () => {
      editing.delete(token);
      window.removeEventListener('beforeunload', onBeforeUnload);
    };
  }, [dirty, question]);
}

/** The next navigation leaves without asking (after a save or a delete, whose edits are not lost). */
export function leaveWithoutAsking(): void {
  allowOnce = true;
}

/** Whether the page may be left: true with no unsaved edits, else what the user answers. */
export function mayLeave(): boolean {
  if (allowOnce) {
    allowOnce = false;
    return true;
  }
  const [question] = editing.values();
  return question === undefined || window.confirm(question);
}

/**
 * Whether a form that closes in place (its Cancel, the page staying) may drop its edits: true with
 * none, else what the user answers.
 */
export function mayDrop(dirty: boolean): boolean {
  return !dirty || window.confirm(DROP_QUESTION);
}

const pathOf = (to: string) => to.split(/[?#]/)[0] ?? to;

/**
 * A wouter location hook whose navigate asks before leaving a page with unsaved edits. A change
 * of the search string alone (a tab of the same page) never asks.
 */
export function guardedLocation<H extends BaseLocationHook>(hook: H): H {
  const guarded = ((...args: Parameters<H>) => {
    const [location, navigate] = hook(...args);
    const guardedNavigate = useCallback(
      (to: string, ...rest: unknown[]) => {
        if (pathOf(to) !== location && !mayLeave()) return;
        return navigate(to, ...rest);
      },
      [location, navigate],
    );
    return [location, guardedNavigate];
  }) as H;
  if (hook.searchHook) guarded.searchHook = hook.searchHook;
  if (hook.hrefs) guarded.hrefs = hook.hrefs;
  return guarded;
}

/**
 * Back and Forward change the page before the app hears of it: with unsaved edits, the
 * question comes first, and a "stay" puts the page's address back before the router sees it.
 * Listens before the router does (call it before the first render).
 */
export function guardHistoryTraversal(): void {
  let current = window.location.href;
  const remember = () => {
    current = window.location.href;
  };
  window.addEventListener('pushState', remember);
  window.addEventListener('replaceState', remember);
  window.addEventListener('popstate', (event) => {
    const next = new URL(window.location.href);
    if (next.pathname !== new URL(current).pathname && !mayLeave()) {
      event.stopImmediatePropagation();
      window.history.pushState(window.history.state, '', current);
      return;
    }
    current = window.location.href;
  });
}
