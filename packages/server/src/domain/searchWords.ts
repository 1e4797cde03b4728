/**
 * The words of the log search, cut here rather than by PostgreSQL: `to_tsvector` over an entry's
 * text was most of the log writer's database time (on PGlite ~0.5 ms of WebAssembly for 1.5 kB of
 * text, more than inserting the row), while reading a ready tsvector is cheap. An entry's words
 * and a search's words are cut by the same rule, so they always agree:
 * a word is a run of letters, marks and digits (any script), lower-cased; anything else separates
 * words ("foo-bar", "snake_case", "a@b.com" and "3.14" are two or three words in a row, found as a
 * phrase). The tsvector keeps each word's positions, so phrases match.
 */

const SEPARATORS = /[^\p{L}\p{M}\p{N}]+/u;
/** PostgreSQL's limits: a lexeme under 2 kB, positions up to 16,383, at most 256 of them a lexeme. */
const MAX_WORD_CHARS = 500;
const MAX_POSITION = 16_383;
const MAX_POSITIONS = 256;

/**
 * A lexeme as a tsvector or tsquery literal writes it. A word here is letters, marks and digits
 * (SEPARATORS cuts everything else), so it never holds the quote or backslash a literal escapes.
 */
const quoted = (word: string) => `'${word}'`;

function wordsIn(text: string): string[] {
  return text
    .toLowerCase()
    .split(SEPARATORS)
    .filter((w) => w.length > 0 && w.length <= MAX_WORD_CHARS);
}

/** The tsvector of `text` as PostgreSQL's input syntax (`'word':1,4 'other':2`), or null when it has no words. */
export function tsvectorOf(text: string): string | null {
  // Lower-cased once and split (no match objects): the cheapest way through 16,000 characters.
  const positions = new Map<string, number[]>();
  let at = 0;
  for (const word of text.toLowerCase().split(SEPARATORS)) {
    if (word.length === 0 || word.length > MAX_WORD_CHARS) continue;
    if (at < MAX_POSITION) at++;
    const list = positions.get(word);
    if (!list) positions.set(word, [at]);
    else if (list.length < MAX_POSITIONS && list[list.length - 1] !== at) list.push(at);
  }
  if (positions.size === 0) return null;
  const parts: string[] = [];
  for (const [word, list] of positions) parts.push(`${quoted(word)}:${list.join(',')}`);
  return parts.join(' ');
}

/** Several words in a row (one word of the search cut in several) must follow each other. */
const phrase = (words: string[]) => (words.length === 1 ? (words[0] as string) : `(${words.join(' <-> ')})`);

/**
 * A search in web-search syntax as a tsquery literal, with the words cut as the entries' were:
 * words are all required, `"a phrase"` in that order, `-word` (or `-"a phrase"`) excluded, `or`
 * between two terms either. Null when it has no word to look for (it then finds nothing).
 */
export function tsqueryOf(search: string): string | null {
  // Terms: a quoted phrase or a run of other characters, each maybe negated; `or` joins two.
  const terms: { not: boolean; or: boolean; words: string[] }[] = [];
  let pendingOr = false;
  const TERM = /(-?)(?:"([^"]*)"?|([^\s"]+))/g;
  for (const m of search.matchAll(TERM)) {
    const [, minus, inQuotes, bare] = m;
    if (bare !== undefined && !minus && bare.toLowerCase() === 'or') {
      pendingOr = terms.length > 0;
      continue;
    }
    const words = wordsIn(inQuotes ?? bare ?? '');
    if (words.length === 0) continue;
    terms.push({ not: minus === '-', or: pendingOr, words: words.map(quoted) });
    pendingOr = false;
  }
  // AND of OR-groups; a group of one term needs no parentheses.
  const groups: string[][] = [];
  for (const t of terms) {
    const expr = t.not ? `!${phrase(t.words)}` : phrase(t.words);
    if (t.or && groups.length > 0) (groups[groups.length - 1] as string[]).push(expr);
    else groups.push([expr]);
  }
  if (groups.length === 0) return null;
  return groups.map((g) => (g.length === 1 ? (g[0] as string) : `(${g.join(' | ')})`)).join(' & ');
}
