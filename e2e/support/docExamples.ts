/**
 * The fenced examples of README.md and docs/*.md, in reading order, and what the examples test does
 * with each. The convention, which the pages follow:
 *
 * - ```sh / ```bash blocks are requests: run through bash, a page's blocks in one shell, so a
 *   variable one block sets is there for the next.
 * - ```ts / ```js blocks are SDK snippets: run with node (Node 24 strips TypeScript's types), with
 *   the environment the page's shell exported.
 * - a ```json block is the answer of the request block before it: the last JSON value that block
 *   printed must have its shape (every key it shows, recursively, with the same types). The string
 *   "…" stands for any value, and a key "…" for keys left out.
 * - any block after a line `<!-- not-run: reason -->` is skipped, deliberately; any other block is
 *   an error, so a new example is either run or says why not.
 * - a line `<!-- examples-server: NAME=value … -->` on a page starts that page's server with those
 *   variables (the page says so in its text as well).
 */

export type ExampleKind = 'shell' | 'node' | 'answer' | 'skipped' | 'unmarked';

export type Example = {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  kind: ExampleKind;
  /** The reason given in the `not-run` marker. */
  reason?: string;
  /** For an answer: the index of the request block it answers, when there is one. */
  answers?: number;
};

export type Page = { page: string; examples: Example[]; serverEnv: Record<string, string> };

const SHELL = new Set(['sh', 'bash', 'shell']);
const NODE = new Set(['ts', 'js', 'typescript', 'javascript']);
const NOT_RUN = /^<!--\s*not-run:\s*(.+?)\s*-->$/;
const SERVER_ENV = /^<!--\s*examples-server:\s*(.+?)\s*-->$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)?.*$/;

/** A page's fenced blocks (CommonMark fences: ``` or ~~~, closed by the same run or longer). */
export function parsePage(page: string, markdown: string): Page {
  const lines = markdown.split('\n');
  const examples: Example[] = [];
  const serverEnv: Record<string, string> = {};
  let previousText = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const env = SERVER_ENV.exec(line.trim());
    if (env) {
      for (const pair of (env[1] as string).split(/\s+/)) {
        const at = pair.indexOf('=');
        if (at > 0) serverEnv[pair.slice(0, at)] = pair.slice(at + 1);
      }
    }
    const open = FENCE.exec(line);
    if (!open) {
      if (line.trim() !== '') previousText = line.trim();
      continue;
    }
    const fence = open[1] as string;
    const lang = (open[2] ?? '').toLowerCase();
    const body: string[] = [];
    let j = i + 1;
    while (
      j < lines.length &&
      !new RegExp(`^ {0,3}${fence[0]}{${fence.length},}\\s*$`).test(lines[j] as string)
    ) {
      body.push(lines[j] as string);
      j++;
    }
    const marker = NOT_RUN.exec(previousText);
    const kind: ExampleKind = marker
      ? 'skipped'
      : SHELL.has(lang)
        ? 'shell'
        : NODE.has(lang)
          ? 'node'
          : lang === 'json'
            ? 'answer'
            : 'unmarked';
    const example: Example = { page, line: i + 1, lang, code: body.join('\n'), kind };
    if (marker) example.reason = marker[1];
    if (kind === 'answer') {
      const before = examples.at(-1);
      if (before && (before.kind === 'shell' || before.kind === 'node'))
        example.answers = examples.length - 1;
    }
    examples.push(example);
    previousText = '';
    i = j;
  }
  return { page, examples, serverEnv };
}

/** Every JSON value in a block's output, in order (curl prints answers one after another). */
export function jsonValues(output: string): unknown[] {
  const values: unknown[] = [];
  let i = 0;
  while (i < output.length) {
    const c = output[i] as string;
    if (c !== '{' && c !== '[') {
      i++;
      continue;
    }
    const end = endOfValue(output, i);
    if (end < 0) break;
    try {
      values.push(JSON.parse(output.slice(i, end)));
      i = end;
    } catch {
      i++;
    }
  }
  return values;
}

/** Where the object or array starting at `start` ends (exclusive), or -1. */
function endOfValue(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** A documented value or key that stands for what the page leaves out. */
const ELIDED = '…';

const typeOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/**
 * Where a real answer differs from the documented one: a key the documentation shows that the answer
 * lacks, or a value of another type. The documentation may leave keys out (the answer may have
 * more); each documented array item is held to the real item at its place (or the last one).
 */
export function shapeMismatches(documented: unknown, real: unknown, path = '$'): string[] {
  if (documented === ELIDED) return [];
  const want = typeOf(documented);
  const got = typeOf(real);
  if (want !== got) return [`${path}: documented as ${want}, answered ${got} (${JSON.stringify(real)})`];
  if (want === 'array') {
    const docs = documented as unknown[];
    const items = real as unknown[];
    if (docs.length > 0 && items.length === 0) return [`${path}: documented with items, answered []`];
    return docs.flatMap((item, i) =>
      shapeMismatches(item, items[Math.min(i, items.length - 1)], `${path}[${i}]`),
    );
  }
  if (want === 'object') {
    const doc = documented as Record<string, unknown>;
    const obj = real as Record<string, unknown>;
    return Object.keys(doc).flatMap((key) =>
      key === ELIDED
        ? []
        : key in obj
          ? shapeMismatches(doc[key], obj[key], `${path}.${key}`)
          : [
              `${path}.${key}: documented, missing from the answer (its keys: ${Object.keys(obj).join(', ')})`,
            ],
    );
  }
  return [];
}
