/**
 * The text an entry is found by (issue 29's log search): the words of its error, its prompt and its
 * answer, taken from the strings of the payloads, bounded so that indexing it costs little and can
 * never fail: PostgreSQL's to_tsvector refuses a result over 1 MB, and payloads reach 4 MB. The log
 * writer stores it as a tsvector (`search`, GIN-indexed); the log filter's `q` matches it.
 */

/** The characters kept, in all: the error's first, then the prompt's, then the answer's. */
export const SEARCH_TEXT_MAX = 16_000;
const ERROR_MAX = 1_000;
const PROMPT_MAX = 8_000;

/** Strings that are data rather than words: a data: URL, base64, an id with no space in 200 characters. */
const isData = (s: string) => s.startsWith('data:') || (s.length > 200 && !/\s/.test(s.slice(0, 200)));

/**
 * The strings of `value` (depth first, in order), joined by spaces, at most `max` characters;
 * it stops reading once it has them, so a 4 MB payload costs what its first words do.
 */
export function wordsOf(value: unknown, max: number): string {
  const parts: string[] = [];
  let left = max;
  const stack: unknown[] = [value];
  while (stack.length > 0 && left > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.length === 0 || isData(v)) continue;
      const part = v.length > left ? v.slice(0, left) : v;
      parts.push(part);
      left -= part.length + 1;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
    } else if (v !== null && typeof v === 'object') {
      const values = Object.values(v);
      for (let i = values.length - 1; i >= 0; i--) stack.push(values[i]);
    }
  }
  return parts.join(' ');
}

/** Without NUL (which text cannot hold) and without half a surrogate pair at the cut. */
function clean(text: string): string {
  let t = text.includes('\0') ? text.replaceAll('\0', ' ') : text;
  const last = t.charCodeAt(t.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) t = t.slice(0, -1);
  return t;
}

/** The words an entry is found by, or null when it has none. */
export function searchTextOf(entry: {
  errorMessage?: string | null | undefined;
  providerRequest?: unknown;
  clientRequest?: unknown;
  providerResponse?: unknown;
}): string | null {
  const error = entry.errorMessage ? entry.errorMessage.slice(0, ERROR_MAX) : '';
  const prompt = wordsOf(entry.providerRequest ?? entry.clientRequest, PROMPT_MAX);
  const answer = wordsOf(entry.providerResponse, SEARCH_TEXT_MAX - error.length - prompt.length - 2);
  const text = clean([error, prompt, answer].filter(Boolean).join(' ').slice(0, SEARCH_TEXT_MAX));
  return text.length > 0 ? text : null;
}
