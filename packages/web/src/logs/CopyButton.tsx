import { useEffect, useRef, useState } from 'react';

type CopyState = 'idle' | 'copied' | 'failed';

/** A copy action that knows its text, so a button can show it selected when the clipboard refuses. */
export type Copy = (() => Promise<void>) & { text?: string };

/**
 * Copies `text` (or what `copy` writes) to the clipboard, and says whether it worked for a
 * moment. Where the clipboard API is missing (a page served over plain HTTP) or refused, the
 * text is shown selected instead, copied with the browser's own copy command where it allows
 * it, and otherwise ready for Ctrl+C.
 */
export function CopyButton({
  copy,
  text,
  label = 'Copy',
  className = 'button small',
}: {
  copy?: Copy;
  text?: string;
  label?: string;
  className?: string;
}) {
  const [state, setState] = useState<CopyState>('idle');
  const [fallback, setFallback] = useState<string | null>(null);
  const shown = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);
  useEffect(() => {
    const area = shown.current;
    if (fallback === null || !area) return;
    area.focus();
    area.select();
    if (copiedBySelection()) {
      setFallback(null);
      setState('copied');
    }
  }, [fallback]);

  const known = text ?? copy?.text;
  const onClick = async () => {
    try {
      if (copy) await copy();
      else await writeClipboard(known ?? '');
      setFallback(null);
      setState('copied');
    } catch {
      if (known === undefined) setState('failed');
      else setFallback(known);
    }
  };
  return (
    <>
      <button type="button" className={className} onClick={onClick} aria-live="polite">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : label}
      </button>
      {fallback !== null && (
        <span className="copy-fallback">
          <label className="muted small">
            This browser did not let the page copy: the text is selected, press Ctrl+C (⌘C on a Mac).
            <textarea
              ref={shown}
              className="copy-fallback-text"
              readOnly
              rows={Math.min(8, fallback.split('\n').length)}
              value={fallback}
              onBlur={() => setFallback(null)}
            />
          </label>
        </span>
      )}
    </>
  );
}

/** Writes to the clipboard; rejects where the API is missing or the browser refuses. */
async function writeClipboard(text: string): Promise<void> {
  if (!navigator.clipboard?.writeText) throw new Error('No clipboard API here');
  await navigator.clipboard.writeText(text);
}

/** The browser's own copy of the current selection, where it still has one. */
function copiedBySelection(): boolean {
  try {
    return typeof document.execCommand === 'function' && document.execCommand('copy');
  } catch {
    return false;
  }
}

export const copyText = (text: string): Copy => Object.assign(() => writeClipboard(text), { text });
