/**
 * How every adapter fails, against each provider's emulator: HTTP errors in the provider's own
 * shape, a provider that never answers, a connection dropped before the answer, halfway through
 * a body or in the middle of a stream, and a stream that ends without its terminal event. What
 * matters is the ProviderError: its kind, its status and whether routing may fall back.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChatParams, ProviderAdapter } from '../../src/providers/types.ts';
import { adapterFrom, complete, failureOf, stream } from '../support/emulators/adapters.ts';
import * as anthropic from '../support/emulators/anthropic.ts';
import * as gemini from '../support/emulators/gemini.ts';
import * as openai from '../support/emulators/openai.ts';
import {
  expectRepliesUsed,
  type Reply,
  type Responder,
  type Upstream,
} from '../support/emulators/upstream.ts';

type Emulated = {
  upstream: Upstream;
  adapter: ProviderAdapter;
  /** The same provider with a key it does not know. */
  wrongKey: ProviderAdapter;
};

type ProviderCase = {
  provider: string;
  model: string;
  start(): Promise<Emulated>;
  error(status: number, message: string): Reply;
  plain(): unknown;
  /** A good stream, cut by `cut` and ended by `ending`. */
  stream(cut?: (frames: string[]) => string[], ending?: 'end' | 'destroy' | 'hang'): Responder;
  /** The frames of a good stream without its terminal event. */
  withoutTerminal(frames: string[]): string[];
  /** What the provider answers to a wrong key. */
  wrongKeyStatus: number;
};

function openAIFamily(flavor: openai.Flavor, provider: string, model: string): ProviderCase {
  const envKey = provider.toUpperCase();
  return {
    provider,
    model,
    start: async () => {
      const { upstream, baseUrl, apiKey } = await openai.startOpenAIEmulator(flavor, 'right-key');
      const env = { [`${envKey}_BASE_URL`]: baseUrl };
      return {
        upstream,
        adapter: adapterFrom(provider, { ...env, [`${envKey}_API_KEY`]: apiKey }),
        wrongKey: adapterFrom(provider, { ...env, [`${envKey}_API_KEY`]: 'wrong-key' }),
      };
    },
    error: (status, message) => openai.errorReply(flavor, status, message),
    plain: () => openai.completion(flavor, { content: 'Hello there, how are you today?' }),
    stream:
      (cut = (f) => f, ending = 'end') =>
      (request) => ({
        type: 'sse',
        frames: cut(openai.chunkFrames(flavor, request, { content: ['Hel', 'lo', ' there'] })),
        ending,
      }),
    // `[DONE]` is the terminal event; everything before it may have arrived.
    withoutTerminal: (frames) => frames.slice(0, -1),
    wrongKeyStatus: 401,
  };
}

const cases: ProviderCase[] = [
  openAIFamily('openai', 'openai', 'gpt-4o-mini'),
  openAIFamily('mistral', 'mistral', 'mistral-small-latest'),
  openAIFamily('groq', 'groq', 'llama-3.1-8b-instant'),
  {
    provider: 'anthropic',
    model: 'claude-3-5-haiku-latest',
    start: async () => {
      const { upstream, baseUrl, apiKey } = await anthropic.startAnthropicEmulator('right-key');
      return {
        upstream,
        adapter: adapterFrom('anthropic', { ANTHROPIC_API_KEY: apiKey, ANTHROPIC_BASE_URL: baseUrl }),
        wrongKey: adapterFrom('anthropic', { ANTHROPIC_API_KEY: 'wrong-key', ANTHROPIC_BASE_URL: baseUrl }),
      };
    },
    error: anthropic.errorReply,
    plain: () => anthropic.message({ content: [{ type: 'text', text: 'Hello there, how are you today?' }] }),
    stream: (cut = (f) => f, ending = 'end') => ({
      type: 'sse',
      frames: cut(anthropic.streamFrames({ blocks: [{ type: 'text', parts: ['Hel', 'lo', ' there'] }] })),
      ending,
    }),
    // message_stop is the terminal event; message_delta with the stop reason came before it.
    withoutTerminal: (frames) => frames.slice(0, -1),
    wrongKeyStatus: 401,
  },
  {
    provider: 'gemini',
    model: 'gemini-2.5-flash',
    start: async () => {
      const { upstream, baseUrl, apiKey } = await gemini.startGeminiEmulator('right-key');
      return {
        upstream,
        adapter: adapterFrom('gemini', { GEMINI_API_KEY: apiKey, GEMINI_BASE_URL: baseUrl }),
        wrongKey: adapterFrom('gemini', { GEMINI_API_KEY: 'wrong-key', GEMINI_BASE_URL: baseUrl }),
      };
    },
    error: gemini.errorReply,
    plain: () => gemini.response({ parts: [{ text: 'Hello there, how are you today?' }] }),
    stream: (cut = (f) => f, ending = 'end') => ({
      type: 'sse',
      frames: cut(
        gemini.streamFrames({ chunks: [[{ text: 'Hel' }], [{ text: 'lo' }], [{ text: ' there' }]] }),
      ),
      ending,
    }),
    // Gemini has no end marker: the chunk with finishReason is the last one.
    withoutTerminal: (frames) => frames.slice(0, -1),
    // Google answers a bad API key with 400 API_KEY_INVALID.
    wrongKeyStatus: 400,
  },
];

const hello: ChatParams = { messages: [{ role: 'user', content: 'Hello' }] };

describe.each(cases)('$provider', (c) => {
  let e: Emulated;
  beforeAll(async () => {
    e = await c.start();
  });
  expectRepliesUsed(() => e.upstream);

  it.each([
    [429, true],
    [500, true],
    [503, true],
    [408, true],
    [400, false],
    [401, false],
    [403, false],
    [404, false],
  ])('reads HTTP %i as an http error, retryable: %s', async (status, retryable) => {
    e.upstream.reply(c.error(status, `upstream says ${status}`));
    const error = await failureOf(complete(e.adapter, c.model, hello));
    expect(error).toMatchObject({ kind: 'http', status, retryable });
    expect(error.message).toContain(`upstream says ${status}`);
    expect(error.providerResponse).toEqual(
      (c.error(status, `upstream says ${status}`) as { body: unknown }).body,
    );
  });

  it('reads an HTTP error before a stream begins the same way', async () => {
    e.upstream.reply(c.error(429, 'slow down'));
    const error = await failureOf(stream(e.adapter, c.model, hello));
    expect(error).toMatchObject({ kind: 'http', status: 429, retryable: true });
  });

  it('is refused, without fallback, when its key is wrong', async () => {
    const error = await failureOf(complete(e.wrongKey, c.model, hello));
    expect(error).toMatchObject({ kind: 'http', status: c.wrongKeyStatus, retryable: false });
  });

  it('times out, retryably, when the provider never answers', async () => {
    e.upstream.reply({ type: 'hang' });
    const error = await failureOf(complete(e.adapter, c.model, hello, 200));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('times out, retryably, when a stream stalls', async () => {
    e.upstream.reply(c.stream((f) => f.slice(0, 2), 'hang'));
    const error = await failureOf(stream(e.adapter, c.model, hello, 300));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('reads a connection dropped before the answer as a retryable network error', async () => {
    e.upstream.reply({ type: 'reset' });
    const error = await failureOf(complete(e.adapter, c.model, hello));
    expect(error).toMatchObject({ kind: 'network', retryable: true });
  });

  it('reads a connection dropped halfway through the body as a retryable network error', async () => {
    e.upstream.reply({ type: 'truncated', body: c.plain() });
    const error = await failureOf(complete(e.adapter, c.model, hello));
    expect(error).toMatchObject({ kind: 'network', retryable: true });
  });

  it('reads a connection dropped mid-stream as a retryable network error, after the deltas that came', async () => {
    e.upstream.reply(c.stream((f) => f.slice(0, -1), 'destroy'));
    const deltas: unknown[] = [];
    const error = await failureOf(
      e.adapter.chat(c.model, hello, { signal: AbortSignal.timeout(5_000), onDelta: (d) => deltas.push(d) }),
    );
    expect(error).toMatchObject({ kind: 'network', retryable: true });
    expect(deltas.length).toBeGreaterThan(0);
  });

  it('fails a stream that ends without its terminal event', async () => {
    e.upstream.reply(c.stream(c.withoutTerminal));
    const error = await failureOf(stream(e.adapter, c.model, hello));
    expect(error).toMatchObject({ kind: 'network', retryable: true });
    expect(error.message).toMatch(/closed the stream before it finished/);
  });

  it('fails a stream of events that are not JSON as an invalid response', async () => {
    e.upstream.reply({ type: 'sse', frames: ['data: {"choices": [{"delta": {"content": "He\n\n'] });
    const error = await failureOf(stream(e.adapter, c.model, hello));
    expect(error).toMatchObject({ kind: 'invalid_response', retryable: true });
  });

  it('fails a 200 answer that is not JSON as an invalid response', async () => {
    e.upstream.reply({
      type: 'text',
      contentType: 'text/html',
      text: '<html><body>Bad gateway</body></html>',
    });
    const error = await failureOf(complete(e.adapter, c.model, hello));
    expect(error).toMatchObject({ kind: 'invalid_response', retryable: true });
  });
});
