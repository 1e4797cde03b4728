/** Helpers for the /v1/messages tests: requests as Anthropic's clients send them, and named SSE events. */
import { expect } from 'vitest';
import type { TestApp } from './app.ts';
import type { TestUser } from './factories.ts';

export type AnthropicMessage = {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ({ type: string } & Record<string, unknown>)[];
  stop_reason: string;
  stop_sequence: string | null;
  usage: {
    input_tokens: number;
    output_tokens: number;
    cache_read_input_tokens: number;
    cache_creation_input_tokens: number;
  };
};

export type AnthropicErrorBody = { type: 'error'; error: { type: string; message: string } };

export type NamedEvent = { event: string; data: { type: string } & Record<string, unknown> };

/** POST /v1/messages with the key in x-api-key (as Anthropic's SDK sends it) and the gate in its header. */
export function messages(
  app: TestApp,
  user: TestUser,
  gateId: string | null,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  return app.request('/v1/messages', {
    method: 'POST',
    headers: {
      'x-api-key': user.key,
      'anthropic-version': '2023-06-01',
      ...(gateId && { 'x-gatehouse-gate-id': gateId }),
      ...headers,
    },
    json: { model: 'mock/echo', max_tokens: 256, ...body },
  });
}

export async function messageOf(res: Response): Promise<AnthropicMessage> {
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as AnthropicMessage;
}

/** The events of a stream, each frame's `event:` name with its JSON data (which must agree). */
export async function namedEvents(res: Response): Promise<NamedEvent[]> {
  expect(res.status, await res.clone().text()).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((frame) => frame.trim() !== '')
    .map((frame) => {
      const lines = frame.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice('event: '.length) ?? '';
      const data = JSON.parse(
        lines
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice('data: '.length))
          .join('\n'),
      );
      expect(data.type, `the event name of ${frame}`).toBe(event);
      return { event, data };
    });
}

/** The message a stream's events add up to, assembled as Anthropic's SDK does. */
export function assemble(events: NamedEvent[]): AnthropicMessage {
  let message: AnthropicMessage | undefined;
  const json = new Map<number, string>();
  for (const { data } of events) {
    const d = data as never as {
      type: string;
      index: number;
      message: AnthropicMessage;
      content_block: Record<string, unknown> & { type: string };
      delta: Record<string, string>;
      usage: Record<string, number>;
    };
    if (d.type === 'message_start') message = structuredClone(d.message);
    const m = message as AnthropicMessage;
    if (d.type === 'content_block_start') m.content[d.index] = { ...d.content_block };
    if (d.type === 'content_block_delta') {
      const block = m.content[d.index] as Record<string, unknown>;
      if (d.delta.type === 'text_delta') block.text = `${block.text}${d.delta.text}`;
      if (d.delta.type === 'thinking_delta') block.thinking = `${block.thinking}${d.delta.thinking}`;
      if (d.delta.type === 'signature_delta') block.signature = d.delta.signature;
      if (d.delta.type === 'input_json_delta') {
        json.set(d.index, (json.get(d.index) ?? '') + d.delta.partial_json);
      }
    }
    if (d.type === 'content_block_stop' && json.has(d.index)) {
      (m.content[d.index] as Record<string, unknown>).input = JSON.parse(json.get(d.index) || '{}');
    }
    if (d.type === 'message_delta') {
      m.stop_reason = d.delta.stop_reason as string;
      m.stop_sequence = d.delta.stop_sequence ?? null;
      m.usage = { ...m.usage, ...d.usage } as AnthropicMessage['usage'];
    }
  }
  return message as AnthropicMessage;
}

/** The order of a stream's events by type, with each content block's kind and delta kinds. */
export function shapeOf(events: NamedEvent[]): string[] {
  return events.map(({ data }) => {
    const d = data as { type: string; content_block?: { type: string }; delta?: { type?: string } };
    if (d.type === 'content_block_start') return `content_block_start:${d.content_block?.type}`;
    if (d.type === 'content_block_delta') return `content_block_delta:${d.delta?.type}`;
    return d.type;
  });
}
