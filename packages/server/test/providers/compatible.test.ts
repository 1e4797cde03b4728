/**
 * The OpenAI-compatible family, with Groq as the example: configured by base URL alone, max_tokens
 * rather than OpenAI's max_completion_tokens, and usage wherever Groq puts it (`x_groq.usage` on
 * the last chunk, plus the usage chunk when asked for).
 */
import { beforeAll, expect, it } from 'vitest';
import type { ToolDefinition } from '../../src/providers/types.ts';
import { adapterFrom, complete, foldDeltas, stream } from '../support/emulators/adapters.ts';
import { completion, startOpenAIEmulator, streamReply } from '../support/emulators/openai.ts';
import { expectRepliesUsed, type Upstream } from '../support/emulators/upstream.ts';

const MODEL = 'llama-3.1-8b-instant';

const weatherTool: ToolDefinition = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

let upstream: Upstream;
let adapter: ReturnType<typeof adapterFrom>;

beforeAll(async () => {
  const emulator = await startOpenAIEmulator('groq', 'gsk_test');
  upstream = emulator.upstream;
  adapter = adapterFrom('groq', { GROQ_API_KEY: 'gsk_test', GROQ_BASE_URL: emulator.baseUrl });
});
expectRepliesUsed(() => upstream);

it('posts to {base}/chat/completions with max_tokens and reads the answer with cached tokens', async () => {
  const answer = completion('groq', {
    content: 'Paris.',
    model: MODEL,
    usage: { prompt: 300, completion: 2, cached: 256 },
  });
  upstream.reply({ type: 'json', body: answer });
  const result = await complete(adapter, MODEL, {
    messages: [
      { role: 'system', content: 'One word.' },
      { role: 'user', content: 'Capital of France?' },
    ],
    maxTokens: 32,
    seed: 3,
  });

  const sent = upstream.last();
  expect(sent.path).toBe('/openai/v1/chat/completions');
  expect(sent.headers.authorization).toBe('Bearer gsk_test');
  expect(sent.body).toEqual({
    model: MODEL,
    messages: [
      { role: 'system', content: 'One word.' },
      { role: 'user', content: 'Capital of France?' },
    ],
    max_tokens: 32,
    seed: 3,
  });
  expect(result.content).toBe('Paris.');
  expect(result.usage).toEqual({ promptTokens: 300, completionTokens: 2, cachedTokens: 256 });
  expect(result.providerResponse).toEqual(answer);
});

it('streams content in order and takes usage from the usage chunk', async () => {
  upstream.reply(
    streamReply('groq', { content: ['Hel', 'lo'], usage: { prompt: 12, completion: 2 }, model: MODEL }),
  );
  const { completion: result, deltas } = await stream(adapter, MODEL, {
    messages: [{ role: 'user', content: 'Hi' }],
  });
  expect(upstream.last().body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  expect(deltas).toEqual([{ content: 'Hel' }, { content: 'lo' }]);
  expect(result.content).toBe('Hello');
  expect(result.usage).toEqual({ promptTokens: 12, completionTokens: 2 });
});

it('takes usage from x_groq when Groq sends no usage chunk', async () => {
  upstream.reply(
    streamReply('groq', { content: ['Hi'], usage: { prompt: 9, completion: 1 } }, (frames) =>
      frames.filter((f) => !f.includes('"choices":[]')),
    ),
  );
  const { completion: result } = await stream(adapter, MODEL, {
    messages: [{ role: 'user', content: 'Hi' }],
  });
  expect(result.usage).toEqual({ promptTokens: 9, completionTokens: 1 });
});

it('assembles streamed tool calls from argument fragments', async () => {
  upstream.reply(
    streamReply('groq', {
      toolCalls: [{ id: 'call_k2x', name: 'get_weather', argumentParts: ['{"city"', ':"Oslo"}'] }],
    }),
  );
  const { completion: result, deltas } = await stream(adapter, MODEL, {
    messages: [{ role: 'user', content: 'Weather in Oslo?' }],
    tools: [weatherTool],
  });
  expect(foldDeltas(deltas).calls).toEqual([
    { id: 'call_k2x', name: 'get_weather', arguments: '{"city":"Oslo"}' },
  ]);
  expect(result.toolCalls[0]?.function).toEqual({ name: 'get_weather', arguments: '{"city":"Oslo"}' });
  expect(result.finishReason).toBe('tool_calls');
});
