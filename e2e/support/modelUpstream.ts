/**
 * A local model provider for the real coding agents: a node:http server on 127.0.0.1 speaking
 * Anthropic's Messages API (POST /v1/messages) or OpenAI's Responses and chat-completions APIs
 * (POST /v1/responses, /v1/chat/completions), streamed as Server-Sent Events when asked, with the
 * provider's own key check. It plays one task: asked with tools, it calls the agent's file-reading
 * tool on the task's file; once the agent sends that call's result back, it answers with a final
 * text quoting the result. It never sees the file itself, so a final answer holding the file's text
 * proves the agent ran the tool. Asked without tools (an agent's side request, a title), it answers
 * a short text. Every request is recorded as it arrived.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  errorReply as anthropicError,
  streamFrames as anthropicFrames,
  message as anthropicMessage,
} from '../../packages/server/test/support/emulators/anthropic.ts';
import {
  chunkFrames,
  completion,
  errorReply as openAIError,
} from '../../packages/server/test/support/emulators/openai.ts';
import {
  type RecordedRequest,
  type Reply,
  sseFrame,
} from '../../packages/server/test/support/emulators/upstream.ts';

export type Family = 'anthropic' | 'openai';
export type Wire = 'messages' | 'responses' | 'chat';

/** The one tool call the upstream makes: its id, the agent's tool it chose, and the arguments. */
export type ReadCall = { id: string; name: string; input: Record<string, unknown> };

export type ModelUpstream = {
  family: Family;
  /** http://127.0.0.1:PORT */
  url: string;
  /** The base URL a provider setting takes: the host for Anthropic, {host}/v1 for OpenAI. */
  baseUrl: string;
  apiKey: string;
  requests: RecordedRequest[];
  /** The model requests (the wires above), in order. */
  modelRequests(): (RecordedRequest & { wire: Wire })[];
  /** The file the next tool call reads; clears what earlier tasks recorded. */
  startTask(filePath: string): void;
  /** The call made in this task, once made. */
  call(): ReadCall | undefined;
  /** The text of the call's result as the agent sent it back, once sent. */
  toolResult(): string | undefined;
  close(): Promise<void>;
};

/** Token counts every answer reports, so the gateway has usage to log and price. */
export const USAGE = { input: 1_250, output: 48 };

type Body = Record<string, unknown> & {
  stream?: boolean;
  tools?: { name?: string; type?: string; function?: { name?: string } }[];
  messages?: { role: string; content: unknown; tool_call_id?: string }[];
  input?: unknown;
};

const wireOf = (family: Family, pathname: string): Wire | null =>
  family === 'anthropic'
    ? pathname === '/v1/messages'
      ? 'messages'
      : null
    : pathname === '/v1/responses'
      ? 'responses'
      : pathname === '/v1/chat/completions'
        ? 'chat'
        : null;

/** The agent's tools by name, whatever the wire's tool shape. */
function toolNames(body: Body): string[] {
  return (body.tools ?? []).flatMap((t) => {
    const name = t.name ?? t.function?.name;
    return name ? [name] : [];
  });
}

/**
 * How each agent reads a file: Claude Code's Read (or Bash), Codex's exec_command (unified exec),
 * shell_command or the older shell with an argv array.
 */
function readCallFor(names: string[], filePath: string, id: string): ReadCall | null {
  if (names.includes('Read')) return { id, name: 'Read', input: { file_path: filePath } };
  if (names.includes('exec_command')) return { id, name: 'exec_command', input: { cmd: `cat ${filePath}` } };
  if (names.includes('shell_command'))
    return { id, name: 'shell_command', input: { command: `cat ${filePath}` } };
  if (names.includes('shell')) return { id, name: 'shell', input: { command: ['cat', filePath] } };
  if (names.includes('Bash')) return { id, name: 'Bash', input: { command: `cat ${filePath}` } };
  return null;
}

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : '')).join('')
      : '';

/** The result the agent sent back for call `id`, in the wire's shape, if any. */
function resultFor(wire: Wire, body: Body, id: string): string | undefined {
  if (wire === 'messages') {
    for (const m of body.messages ?? []) {
      if (!Array.isArray(m.content)) continue;
      for (const block of m.content as { type: string; tool_use_id?: string; content?: unknown }[])
        if (block.type === 'tool_result' && block.tool_use_id === id) return textOf(block.content);
    }
    return undefined;
  }
  if (wire === 'chat') {
    const m = (body.messages ?? []).find((x) => x.role === 'tool' && x.tool_call_id === id);
    return m ? textOf(m.content) : undefined;
  }
  const items = Array.isArray(body.input)
    ? (body.input as { type?: string; call_id?: string; output?: unknown }[])
    : [];
  const item = items.find(
    (x) => (x.type === 'function_call_output' || x.type === 'custom_tool_call_output') && x.call_id === id,
  );
  return item ? textOf(item.output) : undefined;
}

const finalText = (result: string) => `The file says: ${result.trim()}`;

// ---- Anthropic's Messages wire ----

function messagesReply(body: Body, answer: { text: string } | { call: ReadCall }): Reply {
  const model = typeof body.model === 'string' ? body.model : 'claude-sonnet-4-5';
  const usage = USAGE;
  if (body.stream !== true) {
    const content =
      'text' in answer
        ? [{ type: 'text' as const, text: answer.text }]
        : [
            {
              type: 'tool_use' as const,
              id: answer.call.id,
              name: answer.call.name,
              input: answer.call.input,
            },
          ];
    return { type: 'json', body: anthropicMessage({ content, usage, model }) };
  }
  const json = 'call' in answer ? JSON.stringify(answer.call.input) : '';
  const half = Math.floor(json.length / 2);
  return {
    type: 'sse',
    frames: anthropicFrames({
      model,
      usage,
      blocks:
        'text' in answer
          ? [{ type: 'text', parts: [answer.text.slice(0, 12), answer.text.slice(12)] }]
          : [
              {
                type: 'tool_use',
                id: answer.call.id,
                name: answer.call.name,
                jsonParts: [json.slice(0, half), json.slice(half)],
              },
            ],
    }),
  };
}

// ---- OpenAI's chat-completions wire ----

function chatReply(
  request: RecordedRequest,
  body: Body,
  answer: { text: string } | { call: ReadCall },
): Reply {
  const model = typeof body.model === 'string' ? body.model : 'gpt-5-mini';
  const usage = { prompt: USAGE.input, completion: USAGE.output };
  const call =
    'call' in answer
      ? { id: answer.call.id, name: answer.call.name, arguments: JSON.stringify(answer.call.input) }
      : null;
  if (body.stream !== true) {
    return {
      type: 'json',
      body: completion('openai', {
        model,
        usage,
        ...('text' in answer ? { content: answer.text } : { toolCalls: [call as NonNullable<typeof call>] }),
      }),
    };
  }
  return {
    type: 'sse',
    frames: chunkFrames('openai', request, {
      model,
      usage,
      ...('text' in answer
        ? { content: [answer.text.slice(0, 12), answer.text.slice(12)] }
        : {
            toolCalls: [
              { id: call?.id ?? '', name: call?.name ?? '', argumentParts: [call?.arguments ?? ''] },
            ],
          }),
    }),
  };
}

// ---- OpenAI's Responses wire ----

let responseCount = 0;

/** A `response` object and, when streamed, its events from response.created to response.completed. */
function responsesReply(body: Body, answer: { text: string } | { call: ReadCall }): Reply {
  responseCount += 1;
  const id = `resp_e2e${String(responseCount).padStart(4, '0')}`;
  const base = {
    id,
    object: 'response',
    created_at: 1_764_115_200,
    model: typeof body.model === 'string' ? body.model : 'gpt-5-mini',
    instructions: null,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    error: null,
    incomplete_details: null,
    metadata: {},
    store: false,
  };
  const item =
    'call' in answer
      ? {
          id: `fc_${id}`,
          type: 'function_call',
          status: 'completed',
          call_id: answer.call.id,
          name: answer.call.name,
          arguments: JSON.stringify(answer.call.input),
        }
      : {
          id: `msg_${id}`,
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: answer.text, annotations: [] }],
        };
  const usage = {
    input_tokens: USAGE.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: USAGE.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: USAGE.input + USAGE.output,
  };
  const done = { ...base, status: 'completed', output: [item], usage };
  if (body.stream !== true) return { type: 'json', body: done };

  const events: Record<string, unknown>[] = [];
  const open = { ...base, status: 'in_progress', output: [], usage: null };
  events.push({ type: 'response.created', response: open }, { type: 'response.in_progress', response: open });
  const at = { item_id: item.id, output_index: 0 };
  if (item.type === 'function_call') {
    const args = item.arguments as string;
    const half = Math.floor(args.length / 2);
    events.push(
      {
        type: 'response.output_item.added',
        output_index: 0,
        item: { ...item, status: 'in_progress', arguments: '' },
      },
      { type: 'response.function_call_arguments.delta', ...at, delta: args.slice(0, half) },
      { type: 'response.function_call_arguments.delta', ...at, delta: args.slice(half) },
      { type: 'response.function_call_arguments.done', ...at, arguments: args },
    );
  } else {
    const text = (answer as { text: string }).text;
    const part = { type: 'output_text', text: '', annotations: [] };
    events.push(
      {
        type: 'response.output_item.added',
        output_index: 0,
        item: { ...item, status: 'in_progress', content: [] },
      },
      { type: 'response.content_part.added', ...at, content_index: 0, part },
      { type: 'response.output_text.delta', ...at, content_index: 0, delta: text.slice(0, 12) },
      { type: 'response.output_text.delta', ...at, content_index: 0, delta: text.slice(12) },
      { type: 'response.output_text.done', ...at, content_index: 0, text },
      { type: 'response.content_part.done', ...at, content_index: 0, part: { ...part, text } },
    );
  }
  events.push(
    { type: 'response.output_item.done', output_index: 0, item },
    { type: 'response.completed', response: done },
  );
  return {
    type: 'sse',
    frames: events.map((event, sequence_number) =>
      sseFrame({ ...event, sequence_number }, event.type as string),
    ),
  };
}

async function write(res: http.ServerResponse, reply: Reply): Promise<void> {
  if (reply.type === 'json') {
    const text = JSON.stringify(reply.body);
    res.writeHead(reply.status ?? 200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
    return;
  }
  if (reply.type !== 'sse') throw new Error(`modelUpstream: cannot write a ${reply.type} reply`);
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  for (const frame of reply.frames) res.write(frame);
  res.end();
}

export async function startModelUpstream(family: Family, apiKey: string): Promise<ModelUpstream> {
  const requests: RecordedRequest[] = [];
  const wires = new Map<RecordedRequest, Wire>();
  let filePath: string | undefined;
  let call: ReadCall | undefined;
  let toolResult: string | undefined;
  let calls = 0;

  const answer = (request: RecordedRequest): Reply => {
    const { pathname } = new URL(request.path, 'http://upstream');
    const wire = request.method === 'POST' ? wireOf(family, pathname) : null;
    const refuse = (status: number, message: string) =>
      family === 'anthropic' ? anthropicError(status, message) : openAIError('openai', status, message);
    if (!wire) return refuse(404, `${request.method} ${request.path}: not found`);
    const keyOk =
      family === 'anthropic'
        ? request.headers['x-api-key'] === apiKey
        : request.headers.authorization === `Bearer ${apiKey}`;
    if (!keyOk) return refuse(401, 'invalid API key');
    wires.set(request, wire);
    const body = (request.body ?? {}) as Body;
    const reply = (a: { text: string } | { call: ReadCall }) =>
      wire === 'messages'
        ? messagesReply(body, a)
        : wire === 'chat'
          ? chatReply(request, body, a)
          : responsesReply(body, a);

    const result = call && resultFor(wire, body, call.id);
    if (result !== undefined) {
      toolResult = result;
      return reply({ text: finalText(result) });
    }
    const names = toolNames(body);
    if (names.length === 0) return reply({ text: 'OK' });
    if (!filePath) return refuse(400, 'modelUpstream: no task started');
    calls += 1;
    const id = family === 'anthropic' ? `toolu_01E2eRead${calls}` : `call_e2eRead${calls}`;
    const chosen = readCallFor(names, filePath, id);
    if (!chosen) return refuse(400, `modelUpstream: no file-reading tool among ${names.join(', ')}`);
    call = chosen;
    return reply({ call: chosen });
  };

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    let body: unknown = null;
    try {
      body = raw.length ? JSON.parse(raw.toString('utf8')) : null;
    } catch {
      body = raw.toString('utf8');
    }
    const request: RecordedRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body,
      raw,
    };
    requests.push(request);
    try {
      await write(res, answer(request));
    } catch {
      res.socket?.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    family,
    url,
    baseUrl: family === 'anthropic' ? url : `${url}/v1`,
    apiKey,
    requests,
    modelRequests: () =>
      requests.flatMap((r) => {
        const wire = wires.get(r);
        return wire ? [{ ...r, wire }] : [];
      }),
    startTask(path) {
      filePath = path;
      call = undefined;
      toolResult = undefined;
      requests.length = 0;
    },
    call: () => call,
    toolResult: () => toolResult,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
