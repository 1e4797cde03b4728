/**
 * Custom (free-form) tools across families. OpenAI's `custom` tools take text, not JSON; a
 * provider of another family knows only function tools, so the translation offers each as a
 * function of one string argument, `input`, and its calls go back to the client in the custom
 * shape, the text unwrapped from the arguments JSON (whole, or piece by piece as it streams).
 */
import { isJsonObject } from '@gatehouse/rules/jsonLimits';

/** The function tool a custom tool becomes: one string argument, `input`, carries its text. */
export function customToolFunction(name: string, description: string | null | undefined) {
  return {
    name,
    ...(description != null && { description }),
    parameters: {
      type: 'object',
      properties: { input: { type: 'string', description: 'The free-form input of the tool' } },
      required: ['input'],
      additionalProperties: false,
    },
  };
}

/** A custom tool's call as function arguments (the other way, for a conversation's history). */
export const customArguments = (input: unknown) => JSON.stringify({ input: input ?? '' });

/**
 * The names of a body's custom tools, in either OpenAI wire format: Responses keeps the name on
 * the tool (`{type: "custom", name}`), chat completions under `custom` (`{type: "custom", custom: {name}}`).
 */
export function customToolNames(tools: unknown): ReadonlySet<string> {
  const names = new Set<string>();
  if (!Array.isArray(tools)) return names;
  for (const t of tools) {
    if (!isJsonObject(t) || t.type !== 'custom') continue;
    const name = isJsonObject(t.custom) ? t.custom.name : t.name;
    if (typeof name === 'string') names.add(name);
  }
  return names;
}

/**
 * The text of a custom tool's call from the function arguments the model wrote: their `input`;
 * arguments in any other shape are the text themselves (nothing the model wrote is lost).
 */
export function customInputOf(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (isJsonObject(parsed) && typeof parsed.input === 'string') return parsed.input;
  } catch {
    // Not JSON: the model wrote the text itself.
  }
  return args;
}

const OPENING = /^\s*\{\s*"input"\s*:\s*"/;
/** What may still become OPENING once more of the arguments arrive. */
const OPENING_SO_FAR = /^\s*(?:\{\s*(?:"(?:i(?:n(?:p(?:u(?:t(?:"\s*(?::\s*)?)?)?)?)?)?)?)?)?$/;
const ESCAPED: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};
const HEX4 = /^[0-9a-fA-F]{4}$/;

/**
 * Decodes the `input` of function arguments as they stream: each call takes the next fragment
 * of the arguments and gives the characters of `input` it completes. The arguments begin
 * `{"input": "`; an escape cut short (a trailing backslash, a `\uXXXX` cut mid-way) waits for the
 * rest, and a high surrogate at the end for its pair. Only the new text is read, never what came
 * before: re-reading the whole arguments on each fragment made a 110 KB apply_patch streamed in
 * 4-character fragments hold the event loop for 12.6 s. Arguments in any other shape, or a
 * string JSON would refuse (an unknown escape, a raw control character), yield nothing more.
 */
export function inputDecoder(): (fragment: string) => string {
  let state: 'opening' | 'input' | 'done' = 'opening';
  /** What is not yet decoded: the opening so far, or an escape cut short. */
  let pending = '';
  /** A high surrogate decoded last, held back until its pair comes. */
  let held = '';
  return (fragment) => {
    if (state === 'done') return '';
    let text = pending + fragment;
    pending = '';
    if (state === 'opening') {
      const opening = OPENING.exec(text);
      if (!opening) {
        if (OPENING_SO_FAR.test(text)) pending = text;
        else state = 'done';
        return '';
      }
      state = 'input';
      text = text.slice(opening[0].length);
    }
    const parts = [held];
    let run = 0;
    let at = 0;
    while (at < text.length) {
      const c = text.charCodeAt(at);
      if (c !== 0x22 && c !== 0x5c && c >= 0x20) {
        at += 1;
        continue;
      }
      parts.push(text.slice(run, at));
      if (c === 0x22) {
        state = 'done';
        break;
      }
      if (c < 0x20) {
        // JSON has no raw control character in a string: what was decoded of this fragment is
        // not sent either, as a parse of the whole would have refused it all.
        state = 'done';
        return '';
      }
      const kind = text[at + 1];
      if (kind === undefined || (kind === 'u' && at + 6 > text.length)) {
        pending = text.slice(at);
        break;
      }
      if (kind === 'u') {
        const hex = text.slice(at + 2, at + 6);
        if (!HEX4.test(hex)) {
          state = 'done';
          return '';
        }
        parts.push(String.fromCharCode(Number.parseInt(hex, 16)));
        at += 6;
      } else {
        const char = ESCAPED[kind];
        if (char === undefined) {
          state = 'done';
          return '';
        }
        parts.push(char);
        at += 2;
      }
      run = at;
    }
    if (state === 'input' && pending === '') parts.push(text.slice(run));
    const decoded = parts.join('');
    const last = decoded.charCodeAt(decoded.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      held = decoded.slice(-1);
      return decoded.slice(0, -1);
    }
    held = '';
    return decoded;
  };
}

/**
 * A streamed custom call's text, as the function arguments arrive: `push` takes a fragment of
 * the arguments and gives the text it adds, `end` gives the whole text and what is left to send.
 */
export function customInputStream() {
  const args: string[] = [];
  const decode = inputDecoder();
  let sent = '';
  return {
    push(fragment: string): string {
      args.push(fragment);
      const added = decode(fragment);
      sent += added;
      return added;
    },
    end(): { input: string; rest: string } {
      const input = customInputOf(args.join(''));
      const rest = input.startsWith(sent) ? input.slice(sent.length) : '';
      sent = input;
      return { input, rest };
    },
  };
}
