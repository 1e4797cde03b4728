/**
 * The gateway's answer in OpenAI's Responses wire format: the `response` object (a message item
 * with output_text, then one function_call item per tool call, or a custom_tool_call item where
 * the tool called was a custom one), and a stream of its typed events, each numbered by
 * `sequence_number`. Errors keep OpenAI's shape (openAIError).
 */
import type { ChatOutcome, StreamStart } from '../../dataplane/chat.ts';
import { customInputOf, customInputStream } from '../../dataplane/customTools.ts';
import type { SseFormat } from '../../http/sse.ts';
import type { ChatCompletion, StreamDelta, Usage } from '../../providers/types.ts';
import { openAIError } from '../openai.ts';
import type { ResponsesBody } from './request.ts';

/**
 * What a response repeats of its request; empty until the request has been read. `customTools`:
 * the names of the request's custom tools, whose calls (made as function calls by a provider of
 * another family) go back as custom_tool_call items.
 */
export type Echo = Partial<ResponsesBody> & { customTools?: ReadonlySet<string> };

type CustomCall = {
  kind: 'custom_tool_call';
  id: string;
  callId: string;
  name: string;
  input: string;
  /** While streaming: the text as the function arguments arrive. */
  stream?: ReturnType<typeof customInputStream>;
};
type Item =
  | { kind: 'message'; id: string; text: string }
  | { kind: 'function_call'; id: string; callId: string; name: string; arguments: string }
  | CustomCall;

type Status = 'in_progress' | 'completed' | 'incomplete';

const seconds = () => Math.floor(Date.now() / 1000);
const responseId = (id: string) => `resp_${id}`;
const messageId = (id: string) => `msg_${id}`;
const callItemId = (id: string, n: number) => `fc_${id}_${n}`;
const customItemId = (id: string, n: number) => `ctc_${id}_${n}`;

/** A length cut is OpenAI's `incomplete` with reason max_output_tokens; a content filter its own. */
function incompleteOf(c: ChatCompletion): { reason: string } | null {
  if (c.finishReason === 'length') return { reason: 'max_output_tokens' };
  if (c.finishReason === 'content_filter') return { reason: 'content_filter' };
  return null;
}

function usageBody(u: Usage) {
  return {
    input_tokens: u.promptTokens,
    input_tokens_details: { cached_tokens: u.cachedTokens ?? 0 },
    output_tokens: u.completionTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens ?? 0 },
    total_tokens: u.promptTokens + u.completionTokens,
  };
}

const textPart = (text: string) => ({ type: 'output_text', text, annotations: [], logprobs: [] });

function itemBody(item: Item, status: Status) {
  if (item.kind === 'message') {
    const content = status === 'in_progress' ? [] : [textPart(item.text)];
    return { id: item.id, type: 'message', status, role: 'assistant', content };
  }
  if (item.kind === 'custom_tool_call') {
    return {
      id: item.id,
      type: 'custom_tool_call',
      status,
      call_id: item.callId,
      name: item.name,
      input: status === 'in_progress' ? '' : item.input,
    };
  }
  return {
    id: item.id,
    type: 'function_call',
    status,
    call_id: item.callId,
    name: item.name,
    arguments: status === 'in_progress' ? '' : item.arguments,
  };
}

function toolsOf(echo: Echo) {
  return (echo.tools ?? []).map((t) =>
    echo.customTools?.has(t.name)
      ? { type: 'custom', name: t.name, description: t.description ?? null }
      : {
          type: 'function',
          name: t.name,
          description: t.description ?? null,
          parameters: t.parameters ?? null,
          strict: t.strict ?? null,
        },
  );
}

type Outcome = { status: Status; output: Item[]; usage: Usage | null; incomplete: { reason: string } | null };

function responseObject(id: string, model: string, createdAt: number, echo: Echo, o: Outcome) {
  return {
    id: responseId(id),
    object: 'response',
    created_at: createdAt,
    status: o.status,
    ...(o.status !== 'in_progress' && { completed_at: seconds() }),
    background: false,
    error: null,
    incomplete_details: o.incomplete,
    instructions: echo.instructions ?? null,
    max_output_tokens: echo.max_output_tokens ?? null,
    metadata: echo.metadata ?? {},
    model,
    output: o.output.map((item) => itemBody(item, o.status)),
    parallel_tool_calls: echo.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: echo.temperature ?? null,
    text: { format: echo.text?.format ?? { type: 'text' } },
    tool_choice: echo.tool_choice ?? 'auto',
    tools: toolsOf(echo),
    top_p: echo.top_p ?? null,
    truncation: 'disabled',
    usage: o.usage ? usageBody(o.usage) : null,
    user: echo.user ?? null,
  };
}

/** A call of the function a custom tool became, as the custom tool's call; any other as it is. */
function callItem(
  id: string,
  n: number,
  call: ChatCompletion['toolCalls'][number],
  custom: Echo['customTools'],
): Item {
  const { name, arguments: args } = call.function;
  if (custom?.has(name)) {
    return {
      kind: 'custom_tool_call',
      id: customItemId(id, n),
      callId: call.id,
      name,
      input: customInputOf(args),
    };
  }
  return { kind: 'function_call', id: callItemId(id, n), callId: call.id, name, arguments: args };
}

/** The items of a completion: its text (when it has any, or nothing else), then its tool calls. */
function itemsOf(id: string, c: ChatCompletion, custom: Echo['customTools']): Item[] {
  const text = c.content ?? '';
  return [
    ...(text !== '' || c.toolCalls.length === 0
      ? [{ kind: 'message' as const, id: messageId(id), text }]
      : []),
    ...c.toolCalls.map((call, n) => callItem(id, n, call, custom)),
  ];
}

export function responseBody(o: ChatOutcome, echo: Echo) {
  const incomplete = incompleteOf(o.completion);
  return responseObject(o.id, o.modelUsed, seconds(), echo, {
    status: incomplete ? 'incomplete' : 'completed',
    output: itemsOf(o.id, o.completion, echo.customTools),
    usage: o.usage,
    incomplete,
  });
}

type Event = { type: string } & Record<string, unknown>;

/**
 * The stream as the Responses API's events: response.created and response.in_progress first;
 * then per output item, output_item.added, its content (a text part's added, deltas and done, or
 * a function call's argument deltas and done, a custom tool call's input deltas and done) and
 * output_item.done; then response.completed (or
 * response.incomplete) with the whole response. A failure once streaming is an `error` event.
 * `echo` is read once the request has been parsed (the first event comes after that).
 */
export function responseStream(echo: () => Echo): SseFormat {
  let sequence = 0;
  let createdAt = 0;
  let started = false;
  const items: Item[] = [];
  let open: Item | null = null;
  const calls = new Map<number, Exclude<Item, { kind: 'message' }>>();

  const event = (out: Event[], type: string, fields: Record<string, unknown>) =>
    out.push({ type, sequence_number: sequence++, ...fields });
  const snapshot = (s: StreamStart, o: Outcome) => responseObject(s.id, s.model, createdAt, echo(), o);

  const begin = (s: StreamStart, out: Event[]) => {
    if (started) return;
    started = true;
    createdAt = seconds();
    const response = snapshot(s, { status: 'in_progress', output: [], usage: null, incomplete: null });
    event(out, 'response.created', { response });
    event(out, 'response.in_progress', { response });
  };
  const close = (out: Event[]) => {
    if (!open) return;
    const item = open;
    const output_index = items.indexOf(item);
    open = null;
    if (item.kind === 'message') {
      const at = { item_id: item.id, output_index, content_index: 0 };
      event(out, 'response.output_text.done', { ...at, text: item.text, logprobs: [] });
      event(out, 'response.content_part.done', { ...at, part: textPart(item.text) });
    } else if (item.kind === 'custom_tool_call') {
      const at = { item_id: item.id, output_index };
      const ended = item.stream?.end();
      if (ended) item.input = ended.input;
      const rest = ended?.rest ?? '';
      if (rest) event(out, 'response.custom_tool_call_input.delta', { ...at, delta: rest });
      event(out, 'response.custom_tool_call_input.done', { ...at, input: item.input });
    } else {
      event(out, 'response.function_call_arguments.done', {
        item_id: item.id,
        output_index,
        name: item.name,
        arguments: item.arguments,
      });
    }
    event(out, 'response.output_item.done', { output_index, item: itemBody(item, 'completed') });
  };
  const add = (out: Event[], item: Item) => {
    close(out);
    items.push(item);
    open = item;
    const output_index = items.length - 1;
    event(out, 'response.output_item.added', { output_index, item: itemBody(item, 'in_progress') });
    if (item.kind === 'message') {
      const at = { item_id: item.id, output_index, content_index: 0 };
      event(out, 'response.content_part.added', { ...at, part: textPart('') });
    }
  };

  const delta = (s: StreamStart, d: StreamDelta) => {
    const out: Event[] = [];
    begin(s, out);
    if (d.content) {
      if (open?.kind !== 'message') add(out, { kind: 'message', id: messageId(s.id), text: '' });
      const item = open as Extract<Item, { kind: 'message' }>;
      item.text += d.content;
      const at = { item_id: item.id, output_index: items.indexOf(item), content_index: 0 };
      event(out, 'response.output_text.delta', { ...at, delta: d.content, logprobs: [] });
    }
    for (const call of d.toolCalls ?? []) {
      let item = calls.get(call.index);
      if (!item) {
        const n = calls.size;
        const callId = call.id ?? `call_${call.index}`;
        const name = call.name ?? '';
        item = echo().customTools?.has(name)
          ? {
              kind: 'custom_tool_call',
              id: customItemId(s.id, n),
              callId,
              name,
              input: '',
              stream: customInputStream(),
            }
          : { kind: 'function_call', id: callItemId(s.id, n), callId, name, arguments: '' };
        calls.set(call.index, item);
        add(out, item);
      }
      if (item.kind === 'custom_tool_call') {
        // The text goes out as it is decoded from the arguments; the rest when the call closes.
        const text = item.stream?.push(call.arguments ?? '') ?? '';
        if (text) {
          event(out, 'response.custom_tool_call_input.delta', {
            item_id: item.id,
            output_index: items.indexOf(item),
            delta: text,
          });
        }
      } else if (call.arguments) {
        item.arguments += call.arguments;
        event(out, 'response.function_call_arguments.delta', {
          item_id: item.id,
          output_index: items.indexOf(item),
          delta: call.arguments,
        });
      }
    }
    return out;
  };

  return {
    delta,
    end: (s: StreamStart, o: ChatOutcome) => {
      const start = { ...s, model: o.modelUsed };
      const out: Event[] = [];
      // An answer that came whole (no deltas) is streamed here, as one delta per item.
      if (items.length === 0) {
        const { content, toolCalls } = o.completion;
        if (content) out.push(...delta(start, { content }));
        toolCalls.forEach((call, index) => {
          const { name, arguments: args } = call.function;
          out.push(...delta(start, { toolCalls: [{ index, id: call.id, name, arguments: args }] }));
        });
        // An empty answer is still one (empty) message.
        if (items.length === 0) {
          begin(start, out);
          add(out, { kind: 'message', id: messageId(s.id), text: '' });
        }
      }
      close(out);
      const incomplete = incompleteOf(o.completion);
      const status = incomplete ? 'incomplete' : 'completed';
      const response = snapshot(start, { status, output: items, usage: o.usage, incomplete });
      event(out, `response.${status}`, { response });
      return out;
    },
    error: (error: unknown) => {
      const body = openAIError(error).body as {
        error?: { message: string; code: string | null; param: string | null };
      } | null;
      const e = body?.error ?? { message: 'The stream was interrupted', code: null, param: null };
      return { type: 'error', sequence_number: sequence++, code: e.code, message: e.message, param: e.param };
    },
    eventName: (e: unknown) => (e as Event).type,
    doneMarker: false,
  };
}
