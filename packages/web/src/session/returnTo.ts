/**
 * Where sign-in and sign-up return to: the page asked for before them, carried as `?next=`. Only
 * a path of this site is accepted (never `//host` or an absolute URL elsewhere, no open redirect),
 * and never the sign-in or sign-up page itself; anything else goes to the overview.
 */
export function safeReturnPath(next: string | null | undefined, origin = window.location.origin): string {
  if (!next?.startsWith('/') || next.startsWith('//') || next.includes('\\')) return '/';
  let url: URL;
  try {
    url = new URL(next, origin);
  } catch {
    return '/';
  }
  if (url.origin !== origin) return '/';
  if (url.pathname === '/sign-in' || url.pathname === '/sign-up') return '/';
  return `${url.pathname}${url.search}${url.hash}`;
}

/** The sign-in (or sign-up) page's address, asking it to return to `path` (with its search). */
export function signInPath(page: '/sign-in' | '/sign-up', path: string, search: string): string {
  const here = `${path}${search ? `?${search}` : ''}`;
  return here === '/' ? page : `${page}?${new URLSearchParams({ next: here })}`;
}
