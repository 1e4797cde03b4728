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

/**
 * How much of `input` the arguments streamed so far hold, decoded: the arguments begin
 * `{"input": "` and the string's characters up to the last whole escape. A lone high surrogate
 * at the end waits for its pair. Arguments in any other shape yield nothing until the end.
 */
function partialInput(args: string): string {
  const opening = OPENING.exec(args);
  if (!opening) return '';
  let end = opening[0].length;
  let cut = end;
  while (end < args.length) {
    const c = args[end];
    if (c === '"') break;
    if (c === '\\') {
      const width = args[end + 1] === 'u' ? 6 : 2;
      if (end + width > args.length) break;
      end += width;
    } else end += 1;
    cut = end;
  }
  let text: string;
  try {
    text = JSON.parse(`"${args.slice(opening[0].length, cut)}"`) as string;
  } catch {
    return '';
  }
  const last = text.charCodeAt(text.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? text.slice(0, -1) : text;
}

/**
 * A streamed custom call's text, as the function arguments arrive: `push` takes a fragment of
 * the arguments and gives the text it adds, `end` gives the whole text and what is left to send.
 */
export function customInputStream() {
  let args = '';
  let sent = '';
  return {
    push(fragment: string): string {
      args += fragment;
      const known = partialInput(args);
      if (known.length <= sent.length || !known.startsWith(sent)) return '';
      const added = known.slice(sent.length);
      sent = known;
      return added;
    },
    end(): { input: string; rest: string } {
      const input = customInputOf(args);
      const rest = input.startsWith(sent) ? input.slice(sent.length) : '';
      sent = input;
      return { input, rest };
    },
  };
}
