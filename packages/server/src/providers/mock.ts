/**
 * The built-in mock provider: no network, no key, deterministic answers. Directives in the last
 * user message make it misbehave on demand, for tests, demos and benchmarks:
 *   [mock:delay=MS]            answer after MS milliseconds
 *   [mock:fail=STATUS]         fail as a provider answering HTTP STATUS would (429, 500, 400…)
 *   [mock:fail=STATUS@MODEL]   the same, only when MODEL (e.g. mock/echo) is the one asked
 *   [mock:timeout] / [mock:timeout@MODEL]   never answer (the attempt times out)
 *   [mock:refuse]              refuse on content policy
 *   [mock:tool=NAME]           call tool NAME (when the request offers tools and its last
 *                              message is the user's: after a tool result it answers in text)
 *   [mock:badjson] / [mock:badjson@MODEL]   answer with text that is not JSON
 *   [mock:role=NAME]           as an agent gate's router, pick the sub-gate with role NAME
 */
import { isJsonObject } from '@gatehouse/rules/jsonLimits';
import {
  type CallOptions,
  type ChatCompletion,
  type ChatParams,
  type ProviderAdapter,
  ProviderError,
  type ToolCall,
  textOf,
  withWireRequest,
} from './types.ts';

const DIRECTIVE = /\[mock:([a-z]+)(?:=([^\]@]*))?(?:@([^\]]+))?\]/g;

type Directives = Map<string, { value: string | undefined; model: string | undefined }>;

function directivesOf(text: string): Directives {
  const found: Directives = new Map();
  for (const m of text.matchAll(DIRECTIVE)) found.set(m[1] as string, { value: m[2], model: m[3] });
  return found;
}

const applies = (d: { model: string | undefined } | undefined, model: string) =>
  d !== undefined && (d.model === undefined || d.model === `mock/${model}`);

/** A value that satisfies a (simple) JSON schema: what a well-behaved model would return. */
export function sampleOf(schema: unknown): unknown {
  const s = (schema ?? {}) as {
    type?: string | string[];
    properties?: Record<string, unknown>;
    items?: unknown;
    enum?: unknown[];
    const?: unknown;
  };
  if (s.const !== undefined) return s.const;
  if (s.enum?.length) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'string':
      return 'mock';
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array':
      return [sampleOf(s.items)];
    default:
      return Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, sampleOf(v)]));
  }
}

const estimateTokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

function answerText(model: string, params: ChatParams, prompt: string, directives: Directives): string {
  const format = params.responseFormat;
  if (format && format.type !== 'text') {
    if (applies(directives.get('badjson'), model)) return 'this is not JSON';
    const role = directives.get('role')?.value;
    if (format.type === 'json_schema') {
      const sample = sampleOf(format.json_schema.schema);
      // [mock:role=NAME] answers an agent gate's router with that role (dynamic orchestration).
      return JSON.stringify(role !== undefined && isJsonObject(sample) ? { ...sample, role } : sample);
    }
    return JSON.stringify({ echo: prompt });
  }
  switch (model) {
    case 'fast':
      return 'OK';
    case 'smart':
      return `Considered answer: ${prompt}`;
    default:
      return `Echo: ${prompt}`;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/**
 * The directives every mock task type obeys, read from the request's text: waits (`delay`,
 * `timeout`), fails (`fail`), refuses (`refuse`) as asked, else returns the directives for the
 * type's own use. `model` is the mock's model name without the `mock/` prefix.
 */
export async function mockMisbehaviour(
  text: string,
  model: string,
  opts: { latencyMs: number; signal: AbortSignal },
): Promise<Directives> {
  const directives = directivesOf(text);
  try {
    const delay = Number(directives.get('delay')?.value ?? opts.latencyMs);
    if (delay > 0) await sleep(delay, opts.signal);
    if (applies(directives.get('timeout'), model)) await sleep(2 ** 31 - 1, opts.signal);
  } catch {
    const reason = opts.signal.reason as { name?: string } | undefined;
    throw new ProviderError(
      reason?.name === 'TimeoutError' ? 'timeout' : 'network',
      'The mock did not answer in time',
    );
  }
  const fail = directives.get('fail');
  if (applies(fail, model)) {
    const status = Number(fail?.value) || 500;
    const body = { error: { message: `mock failure ${status}`, type: 'mock_error' } };
    throw new ProviderError('http', `Provider answered ${status}: mock failure ${status}`, status, body);
  }
  if (directives.has('refuse')) {
    throw new ProviderError('content_policy', 'The model refused to answer (mock)', null, null);
  }
  return directives;
}

/** The request's text without its mock directives. */
export const withoutDirectives = (text: string) => text.replace(DIRECTIVE, '').trim();

export function createMockAdapter(opts: { latencyMs: number }): ProviderAdapter {
  return {
    // What the mock "receives" is the gateway's own request shape: its failures carry it too.
    chat: (model, params, options) =>
      withWireRequest(() => ({ model, ...params }), answer(model, params, options)),
  };

  async function answer(model: string, params: ChatParams, options: CallOptions): Promise<ChatCompletion> {
    const lastUser = [...params.messages].reverse().find((m) => m.role === 'user');
    const raw = textOf(lastUser?.content);
    const prompt = withoutDirectives(raw);
    const request = { model, ...params };
    const directives = await mockMisbehaviour(raw, model, {
      latencyMs: opts.latencyMs,
      signal: options.signal,
    });
    // After a tool result the model answers, as a real one would, so agent loops end.
    const toolName = params.messages.at(-1)?.role === 'user' ? directives.get('tool')?.value : undefined;
    const tool = toolName ? params.tools?.find((t) => t.function.name === toolName) : undefined;
    const toolCalls: ToolCall[] = tool
      ? [
          {
            id: 'call_mock_0',
            type: 'function',
            function: {
              name: tool.function.name,
              arguments: JSON.stringify(sampleOf(tool.function.parameters)),
            },
          },
        ]
      : [];
    const content = tool ? null : answerText(model, params, prompt, directives);
    const allPrompt = params.messages.map((m) => textOf(m.content as string)).join('\n');
    const usage = {
      promptTokens: estimateTokens(allPrompt),
      completionTokens: estimateTokens(content ?? JSON.stringify(toolCalls)),
    };
    if (options.onDelta) {
      for (const [index, call] of toolCalls.entries()) {
        options.onDelta({
          toolCalls: [{ index, id: call.id, name: call.function.name, arguments: call.function.arguments }],
        });
      }
      for (const word of (content ?? '').match(/\S+\s*/g) ?? []) options.onDelta({ content: word });
    }
    const finishReason = tool ? 'tool_calls' : 'stop';
    return {
      content,
      toolCalls,
      finishReason,
      usage,
      providerRequest: request,
      providerResponse: {
        object: 'chat.completion',
        model: `mock/${model}`,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content, ...(tool && { tool_calls: toolCalls }) },
            finish_reason: finishReason,
          },
        ],
        usage: {
          prompt_tokens: usage.promptTokens,
          completion_tokens: usage.completionTokens,
          total_tokens: usage.promptTokens + usage.completionTokens,
        },
      },
    };
  }
}
