import { renderHook } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
// As in the app (main.tsx): wouter's browser location patches pushState to announce it.
import 'wouter/use-browser-location';
import { guardHistoryTraversal, LEAVE_QUESTION, mayLeave, useUnsavedChanges } from './unsavedChanges.ts';

const popped = () =>
  new Promise<void>((resolve) => window.addEventListener('popstate', () => resolve(), { once: true }));

afterEach(() => {
  Reflect.deleteProperty(window, 'confirm');
});

describe('Back with unsaved edits', () => {
  it('asks, and "stay" puts the page’s address back before the router hears of it', async () => {
    guardHistoryTraversal();
    const confirm = vi.fn(() => false);
    window.confirm = confirm;
    window.history.pushState(null, '', '/gates');
    window.history.pushState(null, '', '/gates/g1?tab=routing');
    const router = vi.fn();
    window.addEventListener('popstate', router);
    const { unmount } = renderHook(() => useUnsavedChanges(true));

    // The guard listens first; a "stay" stops the event before the router's listener, and puts the address back.
    const putBack = new Promise((resolve) => window.addEventListener('pushState', resolve, { once: true }));
    window.history.back();
    await putBack;
    expect(confirm).toHaveBeenCalledWith(LEAVE_QUESTION);
    expect(router).not.toHaveBeenCalled();
    expect(`${window.location.pathname}${window.location.search}`).toBe('/gates/g1?tab=routing');

    // Without edits, Back goes back (to the page before, the address put back replaced the
    // one left) and asks nothing.
    unmount();
    const back = popped();
    window.history.back();
    await back;
    expect(window.location.pathname).toBe('/gates');
    expect(router).toHaveBeenCalled();
    expect(confirm).toHaveBeenCalledTimes(1);
    window.removeEventListener('popstate', router);
  });

  it('lets one leave without asking after a save', () => {
    const confirm = vi.fn(() => false);
    window.confirm = confirm;
    const { unmount } = renderHook(() => useUnsavedChanges(true));
    expect(mayLeave()).toBe(false);
    unmount();
    expect(mayLeave()).toBe(true);
    expect(confirm).toHaveBeenCalledTimes(1);
  });
});
