/**
 * A recorded Claude Code session through /v1/messages to local servers speaking Anthropic's and
 * OpenAI's wire formats: one upstream request per client request, and the upstream bodies as each
 * provider needs them (cache marks, thinking and betas reach Anthropic only; tools and tool
 * results translated for OpenAI), with the answers streamed back as Anthropic's events.
 */
import { describe, expect, it } from 'vitest';
import { assemble, messageOf, messages, namedEvents, shapeOf } from './support/anthropic.ts';
import { useTestApp } from './support/app.ts';
import { logEntriesOf } from './support/chat.ts';
import {
  CLAUDE_CODE_HEADERS,
  CLAUDE_CODE_SESSION,
  CLAUDE_CODE_TOOLS,
  EDIT_CALL,
  FORWARDED_BETA_HEADER,
  READ_CALL,
  REASONING,
} from './support/claudeCode.ts';
import { errorFrame, errorReply, message, streamFrames } from './support/emulators/anthropic.ts';
import { streamFrames as geminiFrames } from './support/emulators/gemini.ts';
import { completion as openAICompletion, streamReply } from './support/emulators/openai.ts';
import { useEmulators } from './support/emulators/useEmulators.ts';
import { createGate, signUpUser } from './support/factories.ts';

const { anthropic, openai, mistral, gemini, env } = await useEmulators({
  anthropic: { apiKey: 'sk-ant-upstream' },
  openai: { apiKey: 'sk-openai-upstream' },
  mistral: { apiKey: 'sk-mistral-upstream' },
  gemini: { apiKey: 'gemini-upstream-key' },
});
const app = useTestApp(env);

// Claude Code asks for its own model; the gate decides (a model override is not allowed here).
const OVERRIDES = { maxTokens: true, temperature: true };

async function session(gateModel: string) {
  const user = await signUpUser(app);
  const gate = await createGate(app, user, { model: gateModel, allowOverrides: OVERRIDES });
  const send = (body: Record<string, unknown>) =>
    messages(app, user, gate.id, body, CLAUDE_CODE_HEADERS as Record<string, string>);
  return { user, gate, send };
}

describe('a Claude Code session through a gate to Anthropic', () => {
  it('sends each request once, with cache marks, tools, thinking and known betas as Claude Code sent them', async () => {
    const { gate, send } = await session('anthropic/claude-sonnet-4-5');
    const upstream = anthropic.upstream;
    const [probe, first, second, third] = CLAUDE_CODE_SESSION as Record<string, unknown>[];

    upstream.reply(
      { type: 'json', body: message({ stopReason: 'max_tokens', usage: { input: 8, output: 1 } }) },
      {
        type: 'sse',
        frames: streamFrames({
          blocks: [
            { type: 'thinking', parts: REASONING.parts, signature: REASONING.signature },
            { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' },
            { type: 'text', parts: ["I'll read ", 'the test first.'] },
            {
              type: 'tool_use',
              id: READ_CALL.id,
              name: 'Read',
              jsonParts: ['{"file_path": ', '"/repo/src/sum.test.ts"}'],
            },
          ],
          usage: { input: 12, output: 80, cacheRead: 14_000, cacheCreation: 1_200 },
        }),
      },
      {
        type: 'sse',
        frames: streamFrames({
          blocks: [
            {
              type: 'tool_use',
              id: EDIT_CALL.id,
              name: 'Edit',
              jsonParts: [JSON.stringify(EDIT_CALL.input)],
            },
          ],
        }),
      },
      {
        type: 'sse',
        frames: streamFrames({ blocks: [{ type: 'text', parts: ['Fixed: ', 'sum adds now.'] }] }),
      },
    );

    // The start-up probe: plain JSON, no thinking, no tools; Anthropic gets it as sent, the gate's model in it.
    const quota = await messageOf(await send(probe as Record<string, unknown>));
    expect(quota.stop_reason).toBe('max_tokens');
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.last().body).toEqual({ ...probe, model: 'claude-sonnet-4-5' });

    // Turn 1: streamed thinking, text and a tool call.
    const events = await namedEvents(await send(first as Record<string, unknown>));
    expect(upstream.requests).toHaveLength(2);
    const sent = upstream.last();
    expect(sent.headers['anthropic-beta']).toBe(FORWARDED_BETA_HEADER);
    expect(sent.headers['x-api-key']).toBe(anthropic.apiKey);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.body).toEqual({ ...first, model: 'claude-sonnet-4-5' });
    expect(sent.body).toMatchObject({
      max_tokens: 32000,
      temperature: 1,
      stream: true,
      thinking: { type: 'enabled', budget_tokens: 4000 },
      system: (first as { system: unknown }).system,
      messages: (first as { messages: unknown }).messages,
    });
    expect(sent.body.tools).toEqual(CLAUDE_CODE_TOOLS);
    expect(sent.body.tools.at(-1).cache_control).toEqual({ type: 'ephemeral' });

    // Anthropic's own events, as it sent them (its ping comes only before a first text block).
    expect(shapeOf(events)).toEqual([
      'message_start',
      'content_block_start:thinking',
      'content_block_delta:thinking_delta',
      'content_block_delta:thinking_delta',
      'content_block_delta:signature_delta',
      'content_block_stop',
      'content_block_start:redacted_thinking',
      'content_block_stop',
      'content_block_start:text',
      'content_block_delta:text_delta',
      'content_block_delta:text_delta',
      'content_block_stop',
      'content_block_start:tool_use',
      'content_block_delta:input_json_delta',
      'content_block_delta:input_json_delta',
      'content_block_delta:input_json_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const answer = assemble(events);
    expect(answer.content).toEqual([
      { type: 'thinking', thinking: REASONING.parts.join(''), signature: REASONING.signature },
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' },
      { type: 'text', text: "I'll read the test first." },
      { type: 'tool_use', ...READ_CALL },
    ]);
    expect(answer.stop_reason).toBe('tool_use');
    // Anthropic's usage as it reported it (service_tier included).
    expect(answer.usage).toEqual({
      input_tokens: 12,
      output_tokens: 80,
      cache_read_input_tokens: 14_000,
      cache_creation_input_tokens: 1_200,
      service_tier: 'standard',
    });

    // Turn 2: the assistant turn comes back with its signed thinking; the tool result keeps its mark.
    await namedEvents(await send(second as Record<string, unknown>));
    expect(upstream.requests).toHaveLength(3);
    expect(upstream.last().body.messages).toEqual((second as { messages: unknown }).messages);

    // Turn 3: a tool result given as blocks, with is_error.
    const last = assemble(await namedEvents(await send(third as Record<string, unknown>)));
    expect(upstream.requests).toHaveLength(4);
    expect(upstream.last().body.messages).toEqual((third as { messages: unknown }).messages);
    expect(last.content).toEqual([{ type: 'text', text: 'Fixed: sum adds now.' }]);
    expect(last.stop_reason).toBe('end_turn');

    const entries = await logEntriesOf(app, gate.id);
    expect(entries.map((e) => [e.endpoint, e.success, e.stream])).toEqual([
      ['/v1/messages', true, false],
      ['/v1/messages', true, true],
      ['/v1/messages', true, true],
      ['/v1/messages', true, true],
    ]);
    expect(entries[1]?.toolCalls).toEqual([
      {
        id: READ_CALL.id,
        type: 'function',
        function: { name: 'Read', arguments: JSON.stringify(READ_CALL.input) },
      },
    ]);
    expect(entries[1]?.promptTokens).toBe(12 + 14_000 + 1_200);
  });

  it('fits the thinking budget under the gate’s own output cap, which wins over the client’s', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'anthropic/claude-sonnet-4-5', maxTokens: 2000 });
    anthropic.upstream.reply({
      type: 'sse',
      frames: streamFrames({ blocks: [{ type: 'text', parts: ['ok'] }] }),
    });
    const res = await messages(app, user, gate.id, CLAUDE_CODE_SESSION[1] as Record<string, unknown>);
    await namedEvents(res);
    expect(anthropic.upstream.last().body).toMatchObject({
      max_tokens: 2000,
      thinking: { type: 'enabled', budget_tokens: 1999 },
    });
    expect(res.headers.get('x-gatehouse-ignored-overrides')).toBe('model,temperature,maxTokens');
  });

  it('ends a stream that fails after it began with an error event, not message_stop', async () => {
    const { send } = await session('anthropic/claude-sonnet-4-5');
    const frames = streamFrames({ blocks: [{ type: 'text', parts: ['Half ', 'an answer'] }] });
    anthropic.upstream.reply({
      type: 'sse',
      frames: [...frames.slice(0, 4), errorFrame('overloaded_error', 'Overloaded')],
    });
    const events = await namedEvents(await send(CLAUDE_CODE_SESSION[1] as Record<string, unknown>));
    expect(anthropic.upstream.requests).toHaveLength(1);
    // The events Anthropic sent, in its order, then the gateway's error event.
    expect(shapeOf(events)).toEqual([
      'message_start',
      'content_block_start:text',
      'ping',
      'content_block_delta:text_delta',
      'error',
    ]);
    expect(events.at(-1)?.data.error).toMatchObject({ type: 'overloaded_error' });
  });

  it('answers a failure before the stream began in Anthropic’s error shape and status', async () => {
    const { send } = await session('anthropic/claude-sonnet-4-5');
    anthropic.upstream.reply(errorReply(529, 'Overloaded'));
    const overloaded = await send(CLAUDE_CODE_SESSION[1] as Record<string, unknown>);
    expect(overloaded.status).toBe(529);
    expect(await overloaded.json()).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: expect.stringContaining('Overloaded') },
      // As Anthropic's own API does: the request's id beside the error (its log entry here).
      request_id: overloaded.headers.get('x-gatehouse-request-id'),
    });
    anthropic.upstream.reply(errorReply(400, 'messages.0: bad'));
    const refused = await send(CLAUDE_CODE_SESSION[1] as Record<string, unknown>);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
    expect(anthropic.upstream.requests).toHaveLength(2);
  });
});

describe('a Claude Code session through a gate to OpenAI', () => {
  it('translates tools, tool calls and tool results, drops cache marks, thinking and betas, once per request', async () => {
    const { gate, send } = await session('openai/gpt-4o-mini');
    const upstream = openai.upstream;
    const [probe, first, second, third] = CLAUDE_CODE_SESSION as Record<string, unknown>[];
    upstream.reply(
      { type: 'json', body: openAICompletion('openai', { content: 'Hi', finishReason: 'length' }) },
      streamReply('openai', {
        content: ["I'll read ", 'the test first.'],
        toolCalls: [
          { id: 'call_read', name: 'Read', argumentParts: ['{"file_path":', '"/repo/src/sum.test.ts"}'] },
        ],
        finishReason: 'tool_calls',
        usage: { prompt: 3_000, completion: 40, cached: 2_048 },
      }),
      streamReply('openai', {
        toolCalls: [{ id: 'call_edit', name: 'Edit', argumentParts: [JSON.stringify(EDIT_CALL.input)] }],
        finishReason: 'tool_calls',
      }),
      streamReply('openai', { content: ['Fixed.'], finishReason: 'stop' }),
    );

    const quota = await messageOf(await send(probe as Record<string, unknown>));
    expect(quota).toMatchObject({ content: [{ type: 'text', text: 'Hi' }], stop_reason: 'max_tokens' });
    expect(upstream.requests).toHaveLength(1);

    const events = await namedEvents(await send(first as Record<string, unknown>));
    expect(upstream.requests).toHaveLength(2);
    const sent = upstream.last();
    expect(sent.headers['anthropic-beta']).toBeUndefined();
    const text = JSON.stringify(sent.body);
    for (const word of ['cache_control', 'thinking', 'signature', 'budget_tokens'])
      expect(text).not.toContain(word);
    expect(sent.body.tools).toEqual(
      CLAUDE_CODE_TOOLS.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.input_schema },
      })),
    );
    expect(sent.body.messages).toEqual([
      {
        role: 'system',
        content: [
          { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude." },
          { type: 'text', text: expect.stringContaining('interactive CLI tool') },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: expect.stringContaining('<system-reminder>') },
          { type: 'text', text: 'The test in src/sum.test.ts fails. Fix it.' },
        ],
      },
    ]);
    expect(shapeOf(events)).toEqual([
      'message_start',
      'ping',
      'content_block_start:text',
      'content_block_delta:text_delta',
      'content_block_delta:text_delta',
      'content_block_stop',
      'content_block_start:tool_use',
      'content_block_delta:input_json_delta',
      'content_block_delta:input_json_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const answer = assemble(events);
    expect(answer.content).toEqual([
      { type: 'text', text: "I'll read the test first." },
      { type: 'tool_use', id: 'call_read', name: 'Read', input: { file_path: '/repo/src/sum.test.ts' } },
    ]);
    expect(answer.usage).toEqual({
      input_tokens: 3_000 - 2_048,
      output_tokens: 40,
      cache_read_input_tokens: 2_048,
      cache_creation_input_tokens: 0,
    });

    await namedEvents(await send(second as Record<string, unknown>));
    expect(upstream.requests).toHaveLength(3);
    const history = upstream.last().body.messages;
    expect(history.slice(2)).toEqual([
      {
        role: 'assistant',
        content: "I'll read the test first.",
        tool_calls: [
          {
            id: READ_CALL.id,
            type: 'function',
            function: { name: 'Read', arguments: JSON.stringify(READ_CALL.input) },
          },
        ],
      },
      { role: 'tool', tool_call_id: READ_CALL.id, content: expect.stringContaining('import { sum }') },
    ]);
    expect(JSON.stringify(upstream.last().body)).not.toContain('cache_control');

    const done = assemble(await namedEvents(await send(third as Record<string, unknown>)));
    expect(upstream.requests).toHaveLength(4);
    expect(upstream.last().body.messages.slice(4)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: EDIT_CALL.id,
            type: 'function',
            function: { name: 'Edit', arguments: JSON.stringify(EDIT_CALL.input) },
          },
        ],
      },
      { role: 'tool', tool_call_id: EDIT_CALL.id, content: 'The file /repo/src/sum.ts has been updated.' },
    ]);
    expect(done).toMatchObject({ content: [{ type: 'text', text: 'Fixed.' }], stop_reason: 'end_turn' });

    const entries = await logEntriesOf(app, gate.id);
    expect(entries).toHaveLength(4);
    for (const entry of entries) expect(entry).toMatchObject({ endpoint: '/v1/messages', success: true });
    expect(Number(entries[1]?.costUsd)).toBeGreaterThan(0);
  });
});

describe('a Claude Code turn with tool results through gates to Mistral and Gemini', () => {
  const turn = CLAUDE_CODE_SESSION[2] as Record<string, unknown>;
  const TOOL_ENDING = [
    'content_block_start:tool_use',
    'content_block_delta:input_json_delta',
    'content_block_stop',
    'message_delta',
    'message_stop',
  ];

  it('reaches Mistral once, tool call ids in its alphabet, without what only Anthropic reads', async () => {
    const { send } = await session('mistral/mistral-small-latest');
    mistral.upstream.reply(
      streamReply('mistral', {
        toolCalls: [{ id: 'a1B2c3D4e', name: 'Edit', argumentParts: [JSON.stringify(EDIT_CALL.input)] }],
        finishReason: 'tool_calls',
      }),
    );
    const events = await namedEvents(await send(turn));
    expect(mistral.upstream.requests).toHaveLength(1);
    expect(shapeOf(events).slice(-5)).toEqual(TOOL_ENDING);
    expect(assemble(events).content).toEqual([
      { type: 'tool_use', id: 'a1B2c3D4e', name: 'Edit', input: EDIT_CALL.input },
    ]);
    const text = JSON.stringify(mistral.upstream.last().body);
    for (const word of ['cache_control', 'thinking', 'signature', 'is_error'])
      expect(text).not.toContain(word);
  });

  it('reaches Gemini once, tool results as function responses', async () => {
    const { send } = await session('gemini/gemini-2.5-flash');
    gemini.upstream.reply({
      type: 'sse',
      frames: geminiFrames({ chunks: [[{ functionCall: { name: 'Edit', args: EDIT_CALL.input } }]] }),
    });
    const events = await namedEvents(await send(turn));
    expect(gemini.upstream.requests).toHaveLength(1);
    expect(shapeOf(events).slice(-5)).toEqual(TOOL_ENDING);
    expect(assemble(events).content).toMatchObject([
      { type: 'tool_use', name: 'Edit', input: EDIT_CALL.input },
    ]);
    const sent = gemini.upstream.last().body;
    expect(sent.contents.at(-1)).toEqual({
      role: 'user',
      parts: [
        {
          functionResponse: {
            name: 'Read',
            response: { content: expect.stringContaining('import { sum }') },
          },
        },
      ],
    });
    expect(JSON.stringify(sent)).not.toContain('cache_control');
  });
});
