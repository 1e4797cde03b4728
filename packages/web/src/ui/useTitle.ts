import { useEffect } from 'react';

const APP = 'Gatehouse';

/** What a page is called in the tab and the history: "Logs · Gatehouse"; nothing named yet, "Gatehouse". */
export function pageTitle(name: string | null | undefined): string {
  return name ? `${name} · ${APP}` : APP;
}

/** Names the page in the tab while it is shown; each page calls it before anything else. */
export function useTitle(name: string | null | undefined): void {
  useEffect(() => {
    document.title = pageTitle(name);
  }, [name]);
}
