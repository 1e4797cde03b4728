import { useEffect, useState } from 'react';

type CopyState = 'idle' | 'copied' | 'failed';

/** Copies what `copy` writes to the clipboard, and says whether it worked for a moment. */
export function CopyButton({
  copy,
  label = 'Copy',
  className = 'button small',
}: {
  copy: () => Promise<void>;
  label?: string;
  className?: string;
}) {
  const [state, setState] = useState<CopyState>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);
  const onClick = async () => {
    try {
      await copy();
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <button type="button" className={className} onClick={onClick} aria-live="polite">
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : label}
    </button>
  );
}

export const copyText = (text: string) => () => navigator.clipboard.writeText(text);
