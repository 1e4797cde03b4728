/**
 * A provider key a model streams back split across two deltas (`"sk-proj-Se"`, then
 * `"cret…"`) is in neither delta, so redacting each event alone lets it through. Through every
 * streaming route and every streaming adapter (OpenAI, Anthropic, Gemini), in text, reasoning and
 * tool-call arguments: the text the client puts together from the stream, and the log entry,
 * say [REDACTED] and never the key. The same where a drop-in route forwards the provider's own
 * events (same family, same wire), and there a stream without a key comes back byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { logEntryOf, say } from './support/chat.ts';
import { streamFrames as anthropicFrames, type StreamBlock } from './support/emulators/anthropic.ts';
import { streamFrames as geminiFrames } from './support/emulators/gemini.ts';
import { chunkFrames, responsesFrames, streamReply } from './support/emulators/openai.ts';
import { useEmulators } from './support/emulators/useEmulators.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';

const OPENAI_KEY = 'sk-proj-Secret0penAIKey-4242424242';
const ANTHROPIC_KEY = 'sk-ant-api03-SecretAnthropicKey-77777';
const GEMINI_KEY = 'AIzaSyD-SecretGeminiKey-31415926';
const KEYS = [OPENAI_KEY, ANTHROPIC_KEY, GEMINI_KEY];

const { openai, anthropic, gemini, env } = await useEmulators({
  openai: { apiKey: OPENAI_KEY },
  anthropic: { apiKey: ANTHROPIC_KEY },
  gemini: { apiKey: GEMINI_KEY },
});
const app = useTestApp(env);

/** `key` in the middle of a sentence. */
const LEAK = (key: string) => `The key is ${key} and that is all.`;
/** What the client reads where the model wrote LEAK(key). */
const SAID = LEAK('[REDACTED]');

/** LEAK(key), cut into the pieces the model streams it in. */
function leaked(key: string, cuts: number[]): string[] {
  const text = LEAK(key);
  const at = [0, ...cuts.map((c) => 'The key is '.length + c), text.length];
  return at.slice(1).map((end, i) => text.slice(at[i], end));
}

const TOOL = {
  type: 'function',
  function: {
    name: 'save',
    parameters: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] },
  },
};

// biome-ignore lint/suspicious/noExplicitAny: the events of four wire formats, read as plain JSON
type WireEvent = any;

/** The `data:` payloads of a stream, parsed, without OpenAI's `[DONE]`. */
async function eventsOf(res: Response): Promise<{ text: string; events: Record<string, unknown>[] }> {
  expect(res.status, await res.clone().text()).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const text = await res.text();
  const events = text
    .split('\n\n')
    .map((frame) =>
      frame
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length))
        .join('\n'),
    )
    .filter((data) => data !== '' && data !== '[DONE]')
    .map((data) => JSON.parse(data) as Record<string, unknown>);
  return { text, events };
}

/**
 * The texts a client puts together from a stream: one per channel (`pieces` names an event's
 * pieces, each with the channel it extends), joined in the order they came.
 */
function assembled(events: Record<string, unknown>[], pieces: (e: WireEvent) => [string, unknown][]) {
  const texts = new Map<string, string>();
  for (const e of events) {
    for (const [channel, piece] of pieces(e)) {
      if (typeof piece === 'string') texts.set(channel, (texts.get(channel) ?? '') + piece);
    }
  }
  return texts;
}

/** Neither the stream nor the log entry holds a key; each channel named holds [REDACTED]. */
async function expectRedacted(
  res: Response,
  pieces: (e: WireEvent) => [string, unknown][],
  redactedIn: string[],
) {
  const requestId = res.headers.get('x-gatehouse-request-id');
  const { text, events } = await eventsOf(res);
  const texts = assembled(events, pieces);
  for (const [channel, joined] of texts) {
    for (const key of KEYS) expect(joined, `the client's ${channel}`).not.toContain(key);
  }
  for (const channel of redactedIn)
    expect(texts.get(channel), `the client's ${channel}`).toContain('[REDACTED]');
  for (const key of KEYS) expect(text, 'the stream').not.toContain(key);
  const entry = await logEntryOf(app, requestId);
  expect(entry.success).toBe(true);
  const stored = JSON.stringify(entry);
  for (const key of KEYS) expect(stored, 'the log entry').not.toContain(key);
  expect(stored).toContain('[REDACTED]');
  return texts;
}

/** An Anthropic answer with the key split in each kind of block. */
const SPLIT_BLOCKS: StreamBlock[] = [
  { type: 'thinking', parts: leaked(ANTHROPIC_KEY, [3]), signature: 'EqQBCkgIARABGAIiQL' },
  { type: 'text', parts: leaked(ANTHROPIC_KEY, [14]) },
  {
    type: 'tool_use',
    id: 'toolu_01',
    name: 'save',
    jsonParts: ['{"note": "', ANTHROPIC_KEY.slice(0, 10), `${ANTHROPIC_KEY.slice(10)}"}`],
  },
];

/** An OpenAI chat answer with the key split in its text and in a call's arguments. */
const SPLIT_CHAT = {
  content: leaked(OPENAI_KEY, [9]),
  toolCalls: [
    {
      id: 'call_1',
      name: 'save',
      argumentParts: [
        '{"note":"',
        OPENAI_KEY.slice(0, 5),
        OPENAI_KEY.slice(5, 20),
        `${OPENAI_KEY.slice(20)}"}`,
      ],
    },
  ],
};

function postMessages(user: TestUser, gateId: string) {
  return app.request('/v1/messages', {
    method: 'POST',
    headers: { 'x-api-key': user.key, 'anthropic-version': '2023-06-01', 'x-gatehouse-gate-id': gateId },
    json: {
      model: 'claude-sonnet-4-5',
      max_tokens: 1000,
      stream: true,
      messages: say('the key?'),
      tools: [{ name: 'save', input_schema: TOOL.function.parameters }],
    },
  });
}

function postResponses(user: TestUser, gateId: string) {
  return app.request('/v1/responses', {
    method: 'POST',
    headers: { ...user.auth, 'x-gatehouse-gate-id': gateId },
    json: {
      model: 'gate',
      input: 'the key?',
      stream: true,
      tools: [{ type: 'function', name: 'save', parameters: TOOL.function.parameters }],
    },
  });
}

/** A Responses stream's texts: the answer's, the reasoning summary's, each call's arguments. */
const responsesPieces = (e: WireEvent): [string, unknown][] =>
  e.type === 'response.output_text.delta'
    ? [['text', e.delta]]
    : e.type === 'response.reasoning_summary_text.delta'
      ? [['summary', e.delta]]
      : e.type === 'response.function_call_arguments.delta'
        ? [[`call ${e.output_index}`, e.delta]]
        : [];

/**
 * The client's stream has the events the provider sent, in order, and each one that `changed`
 * does not select byte for byte (or, `keyed`, also any that carried the whole key: redacted whole).
 */
function expectSameEventsBut(
  stream: string,
  frames: string[],
  changed: (e: WireEvent) => boolean,
  keyed = false,
) {
  const got = stream.split('\n\n').filter(Boolean);
  const sent = frames.map((f) => f.replace(/\n\n$/, ''));
  expect(got).toHaveLength(sent.length);
  sent.forEach((frame, i) => {
    const data = JSON.parse(frame.slice(frame.indexOf('data: ') + 6));
    const mayChange = changed(data) || (keyed && KEYS.some((key) => frame.includes(key)));
    if (!mayChange) expect(got[i]).toBe(frame);
    else expect(got[i]?.split('\n')[0]).toBe(frame.split('\n')[0]);
  });
}

describe('a key split across stream deltas', () => {
  it('/v3/chat through OpenAI: text and tool-call arguments', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini', routingStrategy: 'single' });
    openai.upstream.reply(
      streamReply('openai', {
        content: leaked(OPENAI_KEY, [9]),
        toolCalls: [
          {
            id: 'call_1',
            name: 'save',
            argumentParts: [
              '{"note":"',
              OPENAI_KEY.slice(0, 5),
              OPENAI_KEY.slice(5, 20),
              `${OPENAI_KEY.slice(20)}"}`,
            ],
          },
        ],
      }),
    );
    const res = await app.request('/v3/chat', {
      method: 'POST',
      headers: user.auth,
      json: { gateId: gate.id, data: { messages: say('the key?'), tools: [TOOL], stream: true } },
    });
    const texts = await expectRedacted(
      res,
      (e) => [
        ['content', e.delta?.content],
        ...((e.delta?.toolCalls ?? []) as { index: number; arguments?: string }[]).map(
          (t) => [`tool ${t.index}`, t.arguments] as [string, unknown],
        ),
      ],
      ['content', 'tool 0'],
    );
    expect(texts.get('content')).toBe('The key is [REDACTED] and that is all.');
    expect(texts.get('tool 0')).toBe('{"note":"[REDACTED]"}');
  });

  it('leaves text that only begins like a key whole, in order, to the end of the stream', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini', routingStrategy: 'single' });
    const parts = ['Tasks', ' ask', ' for sk-proj-Sec', 'ond keys, not sk-proj-Secret0', 'pen ones: sk-pr'];
    openai.upstream.reply(
      streamReply('openai', {
        content: parts,
        toolCalls: [{ id: 'call_3', name: 'save', argumentParts: ['{"note":"sk-', 'proj"}'] }],
      }),
    );
    const res = await app.request('/v3/chat', {
      method: 'POST',
      headers: user.auth,
      json: { gateId: gate.id, data: { messages: say('the key?'), tools: [TOOL], stream: true } },
    });
    const { events } = await eventsOf(res);
    const deltas = events.filter((e) => e.delta !== undefined) as WireEvent[];
    const content = deltas.filter((e) => e.delta.content !== undefined);
    expect(content.map((e) => e.delta.content).join('')).toBe(parts.join(''));
    // What was held back went out before the tool call began.
    expect(deltas.indexOf(content.at(-1))).toBeLessThan(deltas.findIndex((e) => e.delta.toolCalls));
    const args = deltas.flatMap((e) =>
      (e.delta.toolCalls ?? []).map((t: { arguments?: string }) => t.arguments ?? ''),
    );
    expect(args.join('')).toBe('{"note":"sk-proj"}');
  });

  it('/v1/chat/completions through Gemini: text', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'gemini/gemini-2.5-flash', routingStrategy: 'single' });
    gemini.upstream.reply({
      type: 'sse',
      frames: geminiFrames({ chunks: leaked(GEMINI_KEY, [4, 12]).map((text) => [{ text }]) }),
    });
    const res = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      json: { model: 'gate', messages: say('the key?'), stream: true },
    });
    const texts = await expectRedacted(res, (e) => [['content', e.choices?.[0]?.delta?.content]], [
      'content',
    ]);
    expect(texts.get('content')).toBe('The key is [REDACTED] and that is all.');
  });

  it('/v3/chat through Anthropic: thinking, text and tool input', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'anthropic/claude-sonnet-4-5', maxTokens: 2000 });
    anthropic.upstream.reply({ type: 'sse', frames: anthropicFrames({ blocks: SPLIT_BLOCKS }) });
    const res = await app.request('/v3/chat', {
      method: 'POST',
      headers: user.auth,
      json: {
        gateId: gate.id,
        data: { messages: say('the key?'), tools: [TOOL], stream: true },
      },
    });
    const texts = await expectRedacted(
      res,
      (e) => [
        ['content', e.delta?.content],
        ['thinking', e.delta?.thinking],
        ...((e.delta?.toolCalls ?? []) as { index: number; arguments?: string }[]).map(
          (t) => [`tool ${t.index}`, t.arguments] as [string, unknown],
        ),
      ],
      ['thinking', 'content', 'tool 0'],
    );
    expect(texts.get('thinking')).toBe(SAID);
    expect(texts.get('content')).toBe(SAID);
    expect(texts.get('tool 0')).toBe('{"note": "[REDACTED]"}');
  });

  it('/v1/messages on an OpenAI gate, translated: text and tool input', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini', routingStrategy: 'single' });
    openai.upstream.reply(streamReply('openai', SPLIT_CHAT));
    const res = await postMessages(user, gate.id);
    const texts = await expectRedacted(
      res,
      (e) =>
        e.type === 'content_block_delta' ? [[`block ${e.index}`, e.delta.text ?? e.delta.partial_json]] : [],
      ['block 0', 'block 1'],
    );
    expect(texts.get('block 0')).toBe(SAID);
    expect(texts.get('block 1')).toBe('{"note":"[REDACTED]"}');
  });

  it('/v1/responses on an Anthropic gate, translated: text and function-call arguments', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'anthropic/claude-sonnet-4-5' });
    anthropic.upstream.reply({ type: 'sse', frames: anthropicFrames({ blocks: SPLIT_BLOCKS.slice(1) }) });
    const res = await postResponses(user, gate.id);
    const texts = await expectRedacted(res, responsesPieces, ['text', 'call 1']);
    expect(texts.get('text')).toBe(SAID);
    expect(texts.get('call 1')).toBe('{"note": "[REDACTED]"}');
  });
});

/**
 * A drop-in route on a gate of the client's own family forwards the provider's events as they
 * came: the key is looked for across them, in each wire format's own places for text.
 */
describe('a key split across the events of a forwarded stream', () => {
  it('/v1/messages on an Anthropic gate: thinking, text and tool input', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'anthropic/claude-sonnet-4-5', maxTokens: 2000 });
    const frames = anthropicFrames({ blocks: SPLIT_BLOCKS });
    anthropic.upstream.reply({ type: 'sse', frames });
    const res = await postMessages(user, gate.id);
    const stream = await res.clone().text();
    const texts = await expectRedacted(
      res,
      (e) =>
        e.type === 'content_block_delta'
          ? [[`block ${e.index}`, e.delta.text ?? e.delta.thinking ?? e.delta.partial_json]]
          : [],
      ['block 0', 'block 1', 'block 2'],
    );
    expect(texts.get('block 0')).toBe(SAID);
    expect(texts.get('block 1')).toBe(SAID);
    expect(texts.get('block 2')).toBe('{"note": "[REDACTED]"}');
    expectSameEventsBut(stream, frames, (e) => e.type === 'content_block_delta');
  });

  it('/v1/responses on an OpenAI gate: text, reasoning summary and function-call arguments', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini', routingStrategy: 'single' });
    const frames = responsesFrames({
      output: [
        {
          type: 'reasoning',
          summary: `Found ${OPENAI_KEY}.`,
          parts: ['Found sk-pr', `${OPENAI_KEY.slice(5)}.`],
        },
        { type: 'message', text: LEAK(OPENAI_KEY), parts: leaked(OPENAI_KEY, [1, 20]) },
        {
          type: 'function_call',
          call_id: 'call_2',
          name: 'save',
          arguments: `{"note":"${OPENAI_KEY}"}`,
          parts: [`{"note":"${OPENAI_KEY.slice(0, 8)}`, OPENAI_KEY.slice(8, 9), `${OPENAI_KEY.slice(9)}"}`],
        },
      ],
    });
    openai.upstream.reply({ type: 'sse', frames });
    const res = await postResponses(user, gate.id);
    const stream = await res.clone().text();
    const texts = await expectRedacted(res, responsesPieces, ['summary', 'text', 'call 2']);
    expect(texts.get('summary')).toBe('Found [REDACTED].');
    expect(texts.get('text')).toBe(SAID);
    expect(texts.get('call 2')).toBe('{"note":"[REDACTED]"}');
    // The events that carry the whole text (`.done`, the items, the response) redacted whole.
    expectSameEventsBut(stream, frames, (e) => String(e.type).endsWith('.delta'), true);
  });

  it('/v1/chat/completions on an OpenAI gate: text and tool-call arguments', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini', routingStrategy: 'single' });
    openai.upstream.reply(streamReply('openai', SPLIT_CHAT));
    const res = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      json: { model: 'gate', messages: say('the key?'), tools: [TOOL], stream: true },
    });
    const texts = await expectRedacted(
      res,
      (e) => [
        ['content', e.choices?.[0]?.delta?.content],
        ...(
          (e.choices?.[0]?.delta?.tool_calls ?? []) as { index: number; function?: { arguments?: string } }[]
        ).map((t) => [`tool ${t.index}`, t.function?.arguments] as [string, unknown]),
      ],
      ['content', 'tool 0'],
    );
    expect(texts.get('content')).toBe(SAID);
    expect(texts.get('tool 0')).toBe('{"note":"[REDACTED]"}');
  });

  describe('a stream without a key comes back byte for byte, text that begins like one included', () => {
    // Pieces that end where a key could begin ("sk", "s"), held until the next shows it does not.
    const parts = ['Tasks ask', ' for sk', '-proj-Sec', 'ond keys, not sk-proj-Secret0', 'pen ones: s'];
    const text = parts.join('');

    it('/v1/messages on an Anthropic gate', async () => {
      const user = await signUpUser(app);
      const gate = await createGate(app, user, { model: 'anthropic/claude-sonnet-4-5', maxTokens: 2000 });
      const frames = anthropicFrames({
        blocks: [
          { type: 'thinking', parts, signature: 'EqQBCkgIARABGAIiQL' },
          { type: 'text', parts },
          { type: 'tool_use', id: 'toolu_01', name: 'save', jsonParts: ['{"note": "sk', '-ant"}'] },
        ],
      });
      anthropic.upstream.reply({ type: 'sse', frames });
      const res = await postMessages(user, gate.id);
      expect(await res.text()).toBe(frames.join(''));
    });

    it('/v1/responses on an OpenAI gate', async () => {
      const user = await signUpUser(app);
      const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini', routingStrategy: 'single' });
      const frames = responsesFrames({
        output: [
          { type: 'reasoning', summary: text, parts },
          { type: 'message', text, parts },
          {
            type: 'function_call',
            call_id: 'call_2',
            name: 'save',
            arguments: '{"note":"sk-proj"}',
            parts: ['{"note":"s', 'k-proj"}'],
          },
        ],
      });
      openai.upstream.reply({ type: 'sse', frames });
      const res = await postResponses(user, gate.id);
      expect(await res.text()).toBe(frames.join(''));
    });

    it('/v1/chat/completions on an OpenAI gate', async () => {
      const user = await signUpUser(app);
      const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini', routingStrategy: 'single' });
      const answer = {
        content: parts,
        toolCalls: [{ id: 'call_3', name: 'save', argumentParts: ['{"note":"sk-', 'proj"}'] }],
      };
      let frames: string[] = [];
      openai.upstream.reply((request) => {
        frames = chunkFrames('openai', request, answer);
        return { type: 'sse', frames };
      });
      const res = await app.request('/v1/chat/completions', {
        method: 'POST',
        headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
        // With the usage the client asks for, every chunk the provider sent is the client's.
        json: {
          model: 'gate',
          messages: say('the key?'),
          tools: [TOOL],
          stream: true,
          stream_options: { include_usage: true },
        },
      });
      expect(await res.text()).toBe(frames.join(''));
    });
  });
});
