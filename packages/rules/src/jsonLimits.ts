/**
 * Bounds on a JSON value a client hands over as a structure of its own: a response schema, the
 * gate's stored one or a request's, a tool's schema, a tool call's input, a request's metadata.
 * Checked before anything walks the value recursively or builds from it: one nested thousands
 * deep overflows the stack of every recursive walk (zod's, Ajv's, JSON.stringify's, ours); one
 * with a hundred thousand keys costs zod's parse, the log's copy and the provider's encoding a
 * second of the only thread that answers requests; a large schema costs Ajv's compiler time on
 * each request that sends it.
 */
import { z } from 'zod';

/** A JSON object (not an array, not null): what a body, a block or a tool is read as. */
export const isJsonObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Members of a JSON value: the keys of its objects and the items of its arrays, at every level
 * (`{"a":[1,2]}` has 3). What walking, copying or compiling the value costs grows with them.
 */
export const JSON_OBJECT_LIMITS = {
  /** Objects and arrays inside one another, the outermost counted as 1. */
  maxDepth: 64,
  /** Members of one free-form object: a tool's schema, a tool call's input. */
  maxMembers: 10_000,
  /** Keys of a request's `metadata` (flat: string keys, scalar values). */
  maxMetadataKeys: 64,
} as const;

/**
 * A JSON request body as text: its members (keys and array items, at every level, together) at
 * most this many, counted on the text before JSON.parse builds it. Parsing costs about a
 * microsecond a member on the thread that answers requests (100,000 metadata keys: 80-200 ms), so
 * the body's byte limit alone (10 MB for chat) would let one body hold it for a quarter second.
 */
export const JSON_BODY_LIMITS = { maxMembers: 50_000, maxDepth: 512 } as const;

/**
 * The members of JSON `text` (keys, and items of arrays as the commas between them and the first)
 * and how deep its containers nest, counting no further than `max.members + 1` or `max.depth + 1`:
 * one pass over what lies outside strings, hopping over the strings themselves. Not a validator:
 * on text that is not JSON the figures mean little, and JSON.parse refuses it next. The depth is
 * bounded because JSON.parse builds what JSON.stringify cannot write back (past ~4,000 levels its
 * stack overflows), and a body forwarded as sent is written back whole.
 *
 * `growth`: at most how many characters more JSON.stringify writes the parsed value in than the
 * text takes. Only a number can grow (`1e20` is written as 21 digits, `9999999999999999` as 17);
 * the rest is written as
 * short as JSON allows or shorter (no spaces, `\u00e9` as `é`, a repeated key once), so the
 * text's UTF-8 bytes plus `growth` bound the bytes of the value written back, with no
 * JSON.stringify to measure it (a coding agent's 131 kB body: ~0.6 ms).
 */
export function jsonTextShape(
  text: string,
  max: { members: number; depth: number },
): { members: number; depth: number; growth: number } {
  let members = 0;
  let depth = 0;
  let growth = 0;
  // Whether each open container is an array.
  const arrays: boolean[] = [];
  // Char by char, strings skipped by indexOf: a regular expression's exec built a match array for
  // every bracket, comma and colon, four to five times the time of this loop (143 kB of a coding
  // agent's body: ~500 µs against ~107 µs; a bench chat body: 1.1 µs against 0.2).
  const length = text.length;
  for (let at = 0; at < length && members <= max.members && depth <= max.depth; at++) {
    switch (text.charCodeAt(at)) {
      case 0x22: {
        // '"': hop to the string's closing quote
        let end = text.indexOf('"', at + 1);
        while (end > 0 && isEscaped(text, end)) end = text.indexOf('"', end + 1);
        if (end < 0) return { members, depth, growth };
        at = end;
        break;
      }
      case 0x2d: // '-'
      case 0x30:
      case 0x31:
      case 0x32:
      case 0x33:
      case 0x34:
      case 0x35:
      case 0x36:
      case 0x37:
      case 0x38:
      case 0x39: {
        // A number: to its last character
        let end = at + 1;
        while (end < length && isNumberPart(text.charCodeAt(end))) end++;
        growth += numberGrowth(text, at, end);
        at = end - 1;
        break;
      }
      case 0x3a: // ':' after a key
        members++;
        break;
      case 0x2c: // ',' before an array's next item
        if (arrays[arrays.length - 1]) members++;
        break;
      case 0x5b: {
        // '['
        arrays.push(true);
        if (arrays.length > depth) depth = arrays.length;
        let next = at + 1;
        while (next < length && isSpace(text.charCodeAt(next))) next++;
        if (text.charCodeAt(next) !== 0x5d) members++; // its first item
        break;
      }
      case 0x7b: // '{'
        arrays.push(false);
        if (arrays.length > depth) depth = arrays.length;
        break;
      case 0x5d: // ']'
      case 0x7d: // '}'
        arrays.pop();
        break;
    }
  }
  return { members, depth, growth };
}

/** Digits, the point, the exponent and its sign: what follows a number's first character. */
function isNumberPart(code: number): boolean {
  return (
    (code >= 0x30 && code <= 0x39) ||
    code === 0x2e ||
    code === 0x65 ||
    code === 0x45 ||
    code === 0x2b ||
    code === 0x2d
  );
}

/**
 * At most how many characters more JavaScript writes the number `text.slice(start, end)` in.
 * Without an exponent, none but one: the text is one way to write the double it parses to, so its
 * shortest way (what JavaScript writes) has no more digits, in the same places or as an exponent
 * (`0.50` → `0.5`, `0.0000001` → `1e-7`), except that an integer of 16 digits or more can round
 * up to the next power of ten (`9999999999999999` → `10000000000000000`); a fraction written
 * beside it pays for the extra digit. With an exponent, up to 25 characters in all: a sign, 17
 * digits and `0.00000` or an exponent (`1e20` → 21 digits, `-1.2345678901234567e-6` →
 * `-0.0000012345678901234567`).
 */
function numberGrowth(text: string, start: number, end: number): number {
  let point = false;
  for (let at = start + 1; at < end; at++) {
    const code = text.charCodeAt(at);
    if (code === 0x65 || code === 0x45) return Math.max(0, 25 - (end - start));
    if (code === 0x2e) point = true;
  }
  const digits = text.charCodeAt(start) === 0x2d ? end - start - 1 : end - start;
  return !point && digits >= 16 ? 1 : 0;
}

/** What `\s` matches in a regular expression: JSON's four, and Unicode's other spaces. */
function isSpace(code: number): boolean {
  return (
    code === 0x20 ||
    (code >= 0x09 && code <= 0x0d) ||
    (code > 0x7f &&
      (code === 0xa0 ||
        code === 0x1680 ||
        (code >= 0x2000 && code <= 0x200a) ||
        code === 0x2028 ||
        code === 0x2029 ||
        code === 0x202f ||
        code === 0x205f ||
        code === 0x3000 ||
        code === 0xfeff))
  );
}

/**
 * Where JSON `text` first nests deeper than `maxDepth`, as a dotted path of its first `segments`
 * keys and indices (`messages.1.content.0.input.a…`): a second pass, made only for the message
 * of a body refused for its depth.
 */
export function jsonTextDeepPath(text: string, maxDepth: number, segments = 8): string {
  // Per open container: its key or index so far (arrays count their items).
  const path: (string | number)[] = [];
  const arrays: boolean[] = [];
  const structure = /["[\]{},:]/g;
  const nonSpace = /\S/y;
  for (let found = structure.exec(text); found; found = structure.exec(text)) {
    const at = found.index;
    switch (found[0]) {
      case '"': {
        let end = text.indexOf('"', at + 1);
        while (end > 0 && isEscaped(text, end)) end = text.indexOf('"', end + 1);
        if (end < 0) return render(path, segments);
        nonSpace.lastIndex = end + 1;
        // A key: the string before a colon, in an object.
        if (arrays.at(-1) === false && nonSpace.exec(text)?.[0] === ':')
          path[path.length - 1] = text.slice(at + 1, end);
        structure.lastIndex = end + 1;
        break;
      }
      case ',':
        if (arrays.at(-1)) path[path.length - 1] = (path.at(-1) as number) + 1;
        break;
      case '[':
      case '{':
        arrays.push(found[0] === '[');
        path.push(found[0] === '[' ? 0 : '');
        if (arrays.length > maxDepth) return render(path, segments);
        break;
      case ']':
      case '}':
        arrays.pop();
        path.pop();
        break;
    }
  }
  return render(path, segments);
}

function render(path: (string | number)[], segments: number): string {
  const shown = path.slice(0, -1).slice(0, segments).join('.');
  return path.length - 1 > segments ? `${shown}…` : shown;
}

/** Whether the quote at `at` is escaped: an odd number of backslashes before it. */
function isEscaped(text: string, at: number): boolean {
  let slashes = 0;
  for (let j = at - 1; text.charCodeAt(j) === 0x5c; j--) slashes++;
  return slashes % 2 === 1;
}

export const RESPONSE_SCHEMA_LIMITS = {
  /** Objects and arrays inside one another, the outermost counted as 1. */
  maxDepth: JSON_OBJECT_LIMITS.maxDepth,
  /** The schema as JSON text, in UTF-8 bytes. */
  maxBytes: 65_536,
  /**
   * Members of the schema (keys of its objects, items of its arrays, at every level: a property
   * `"name": {"type": "string"}` is 2). Ajv's compile time grows with them, not with the bytes:
   * 64 KB of short property names took seconds. Within this bound it stays near 50 ms even on a
   * loaded 2-core machine (bench/stall.ts measures it), and it is checked before compiling.
   */
  maxMembers: 768,
  /** Regular expressions in one schema: `pattern` values and `patternProperties` keys. */
  maxPatterns: 32,
  /** Characters in one pattern. */
  maxPatternLength: 1_000,
  /** Characters in all of a schema's patterns together. */
  maxPatternsLength: 4_096,
  /** The largest count of a repetition (`{n}`, `{n,}`, `{n,m}`). */
  maxRepeat: 100,
  /**
   * Characters of all of a schema's patterns once every counted repetition is written out:
   * RE2 compiles `(ab){3}` as `ababab`, about an instruction per character, each kept in memory
   * for as long as the compiled schema is.
   */
  maxPatternsExpanded: 5_000,
} as const;

/**
 * Why `value` is deeper or has more members than allowed, as a message that follows the field's
 * name, or null. Walks without recursion and stops at the first member past the bound, so its own
 * cost is bounded too (a flat object's keys are counted one by one, never listed whole).
 * `members` names what is counted in the message ("keys" where only keys can be).
 */
export function jsonShapeProblem(
  value: unknown,
  limits: { maxDepth: number; maxMembers: number; members?: string },
): string | null {
  const { maxDepth, maxMembers } = limits;
  const tooMany = () =>
    `must have at most ${maxMembers} ${limits.members ?? 'members (object keys and array items, at every level, together)'}`;
  let members = 0;
  const pending: [unknown, number][] = [[value, 1]];
  const visit = (inner: unknown, depth: number) => {
    if (inner !== null && typeof inner === 'object') pending.push([inner, depth + 1]);
  };
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (item === null || typeof item !== 'object') continue;
    if (depth > maxDepth) return `must not nest objects and arrays more than ${maxDepth} deep`;
    if (Array.isArray(item)) {
      members += item.length;
      if (members > maxMembers) return tooMany();
      for (const inner of item) visit(inner, depth);
      continue;
    }
    for (const key in item) {
      if (!Object.hasOwn(item, key)) continue;
      if (++members > maxMembers) return tooMany();
      visit((item as Record<string, unknown>)[key], depth);
    }
  }
  return null;
}

/**
 * A zod schema that refuses a value whose shape is past `limits` before `then` parses it: a
 * record's parse visits every key first, so a check after it (refine) would come too late.
 */
export function shapeBounded<T extends z.ZodType>(
  limits: { maxDepth: number; maxMembers: number; members?: string },
  then: T,
) {
  return z
    .unknown()
    .superRefine((value, ctx) => {
      const problem = jsonShapeProblem(value, limits);
      if (problem) ctx.addIssue({ code: 'custom', message: problem, input: value, continue: false });
    })
    .pipe(then);
}

/**
 * A JSON object of the client's that the gateway translates, forwards and logs (a tool's schema,
 * a tool call's input): at most as deep as a response schema, and at most
 * JSON_OBJECT_LIMITS.maxMembers members.
 */
export const boundedJsonObject = shapeBounded(JSON_OBJECT_LIMITS, z.record(z.string(), z.unknown()));

/**
 * A request's `metadata`: up to JSON_OBJECT_LIMITS.maxMetadataKeys pairs, each key up to 64
 * characters and each value a scalar (a string up to 512), as OpenAI's own metadata (whose limit
 * is 16 pairs). Counted before the pairs are parsed one by one.
 */
export const boundedMetadata = shapeBounded(
  { maxDepth: JSON_OBJECT_LIMITS.maxDepth, maxMembers: JSON_OBJECT_LIMITS.maxMetadataKeys, members: 'keys' },
  z.record(z.string().max(64), z.union([z.string().max(512), z.number(), z.boolean(), z.null()])),
);

const utf8 = new TextEncoder();

/**
 * Why `schema` is too deep, too large or has too many members to be a response schema, or has
 * patterns that would cost too much to compile, or null.
 */
export function responseSchemaSizeProblem(schema: unknown): string | null {
  const { maxBytes } = RESPONSE_SCHEMA_LIMITS;
  const shape = jsonShapeProblem(schema, RESPONSE_SCHEMA_LIMITS);
  if (shape) return shape;
  // Bounded depth and members first, so that this cannot overflow the stack or take long either.
  const bytes = utf8.encode(JSON.stringify(schema) ?? '').length;
  if (bytes > maxBytes) return `must be at most ${maxBytes} bytes as JSON (this one is ${bytes})`;
  return patternsProblem(patternsOf(schema));
}

/**
 * Every `pattern` string and `patternProperties` key anywhere in `schema`. Data under `const`,
 * `enum` or `examples` that happens to have such a key is counted too: a bound, not a parser.
 */
function patternsOf(schema: unknown): string[] {
  const found: string[] = [];
  const pending: unknown[] = [schema];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    if (item === null || typeof item !== 'object') continue;
    if (Array.isArray(item)) {
      for (const inner of item) pending.push(inner);
      continue;
    }
    for (const [key, value] of Object.entries(item)) {
      if (key === 'pattern' && typeof value === 'string') found.push(value);
      if (
        key === 'patternProperties' &&
        value !== null &&
        typeof value === 'object' &&
        !Array.isArray(value)
      ) {
        found.push(...Object.keys(value));
      }
      pending.push(value);
    }
  }
  return found;
}

const quoted = (pattern: string) =>
  JSON.stringify(pattern.length > 60 ? `${pattern.slice(0, 57)}...` : pattern);

function patternsProblem(patterns: string[]): string | null {
  const { maxPatterns, maxPatternLength, maxPatternsLength, maxRepeat, maxPatternsExpanded } =
    RESPONSE_SCHEMA_LIMITS;
  if (patterns.length > maxPatterns) {
    return `must have at most ${maxPatterns} patterns (pattern values and patternProperties keys; this one has ${patterns.length})`;
  }
  let length = 0;
  let expanded = 0;
  for (const pattern of patterns) {
    if (pattern.length > maxPatternLength) {
      return `must have patterns of at most ${maxPatternLength} characters (pattern ${quoted(pattern)} has ${pattern.length})`;
    }
    length += pattern.length;
    const size = expandedLength(pattern);
    if (typeof size === 'string') {
      return `must repeat at most ${maxRepeat} times in a pattern (pattern ${quoted(pattern)} has ${size})`;
    }
    expanded += size;
  }
  if (length > maxPatternsLength) {
    return `must have patterns of at most ${maxPatternsLength} characters together (these have ${length})`;
  }
  if (expanded > maxPatternsExpanded) {
    return `must have patterns of at most ${maxPatternsExpanded} characters together once their counted repetitions ({n}) are written out (these have ${expanded})`;
  }
  return null;
}

/** `{n}`, `{n,}` or `{n,m}`, as JavaScript reads a count after an atom (`{,m}` is literal text). */
const COUNT = /\{(\d+)(,(\d*))?\}/y;

/**
 * About how many instructions RE2 compiles `pattern` into: its length with each counted repetition
 * written out (`a{2,5}` is 5), a group 2 more for recording where it matched (`(ab){3}` is 12); or
 * the first count over the limit, as written. Read as JavaScript reads a pattern, as
 * RE2JS.translateRegExp does: an escape is one atom, a class `[...]` is one atom ending at its
 * first unescaped `]` (so `[]` is empty), a group is one atom as long as what it holds.
 */
function expandedLength(pattern: string): number | string {
  const open: number[] = [0]; // the length so far of each group being read, the outermost first
  let atom = 0; // the length of the last atom: what a count after it repeats
  const settle = () => {
    open[open.length - 1] = (open.at(-1) as number) + atom;
    atom = 0;
  };
  for (let i = 0; i < pattern.length; ) {
    COUNT.lastIndex = i;
    const count = COUNT.exec(pattern);
    if (count) {
      const [text, least, comma, most] = count;
      const times = Math.max(Number(least), Number(most || 0)) + (comma && !most ? 1 : 0);
      if (Math.max(Number(least), Number(most || 0)) > RESPONSE_SCHEMA_LIMITS.maxRepeat) return text;
      atom *= times;
      settle();
      i += text.length;
      continue;
    }
    settle();
    const c = pattern[i];
    if (c === '(') {
      open.push(0);
      i += 1;
    } else if (c === ')') {
      // A group also costs the two instructions that record where it matched.
      atom = (open.length > 1 ? (open.pop() as number) : 0) + 2;
      i += 1;
    } else {
      atom = 1;
      i = c === '\\' ? escapeEnd(pattern, i) : c === '[' ? classEnd(pattern, i) : i + 1;
    }
  }
  settle();
  return open.reduce((sum, length) => sum + length, 0);
}

/** Where the escape at `i` ends: `\p{L}` and `\u{1F600}` run to their brace, the rest are 2. */
function escapeEnd(pattern: string, i: number): number {
  if ('pPu'.includes(pattern[i + 1] ?? '') && pattern[i + 2] === '{') {
    const close = pattern.indexOf('}', i + 3);
    return close < 0 ? pattern.length : close + 1;
  }
  return i + 2;
}

/** Where the class opening at `i` ends: past its first unescaped `]`, as in JavaScript. */
function classEnd(pattern: string, i: number): number {
  let j = i + 1;
  if (pattern[j] === '^') j += 1;
  for (; j < pattern.length; j++) {
    if (pattern[j] === '\\') j += 1;
    else if (pattern[j] === ']') return j + 1;
  }
  return pattern.length;
}
