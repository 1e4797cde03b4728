/**
 * Routing end to end: the real app over HTTP, a fallback gate from OpenAI to Anthropic, and both
 * providers emulated on local ports in their own wire formats. Which upstream failures move the
 * request to the next model, what the client gets, and what the log entry records.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.ts';
import {
  answerOf,
  attemptsOf,
  chat,
  logEntriesOf,
  logEntryOf,
  type NativeError,
  say,
  sseEvents,
} from '../support/chat.ts';
import * as anthropic from '../support/emulators/anthropic.ts';
import * as openai from '../support/emulators/openai.ts';
import { createGate, signUpUser } from '../support/factories.ts';

// The emulators listen before the app reads its environment.
const openaiUpstream = await openai.startOpenAIEmulator('openai', 'sk-test');
const anthropicUpstream = await anthropic.startAnthropicEmulator('sk-ant-test');

const app = useTestApp({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: openaiUpstream.baseUrl,
  ANTHROPIC_API_KEY: 'sk-ant-test',
  ANTHROPIC_BASE_URL: anthropicUpstream.baseUrl,
});

const upstreams = [openaiUpstream.upstream, anthropicUpstream.upstream];
afterEach(() => {
  const unused = upstreams.map((u) => u.pending());
  for (const u of upstreams) u.reset();
  expect(unused, 'scripted replies left unused').toEqual([0, 0]);
});
afterAll(async () => {
  for (const u of upstreams) await u.close();
});

const PRIMARY = 'openai/gpt-4o-mini';
const FALLBACK = 'anthropic/claude-3-5-haiku-latest';

async function fallbackGate() {
  const user = await signUpUser(app);
  const gate = await createGate(app, user, {
    model: PRIMARY,
    routingStrategy: 'fallback',
    fallbackModels: [FALLBACK],
    systemPrompt: 'Answer in French.',
  });
  return { user, gate };
}

describe('a fallback gate from OpenAI to Anthropic', () => {
  it('answers from Anthropic when OpenAI is rate-limited, and logs both attempts', async () => {
    const { user, gate } = await fallbackGate();
    openaiUpstream.upstream.reply(
      openai.errorReply('openai', 429, 'Rate limit reached for gpt-4o-mini', 'rate_limit_exceeded'),
    );
    const answer = anthropic.message({
      content: [{ type: 'text', text: 'Bonjour !' }],
      usage: { input: 21, output: 5 },
    });
    anthropicUpstream.upstream.reply({ type: 'json', body: answer });

    const res = await chat(app, user, gate.id, { messages: say('Say hello') });

    expect(res.headers.get('x-gatehouse-model-used')).toBe(FALLBACK);
    const body = await answerOf(res);
    expect(body).toMatchObject({
      content: 'Bonjour !',
      model: FALLBACK,
      finishReason: 'stop',
      usage: { promptTokens: 21, completionTokens: 5, totalTokens: 26 },
    });
    expect(body.costUsd).toBeGreaterThan(0);

    expect(openaiUpstream.upstream.last().body).toMatchObject({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: 'Say hello' },
      ],
    });
    const sentToAnthropic = anthropicUpstream.upstream.last().body;
    expect(sentToAnthropic).toMatchObject({
      model: 'claude-3-5-haiku-latest',
      system: 'Answer in French.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello' }] }],
    });

    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect(entry).toMatchObject({ success: true, statusCode: 200, modelUsed: FALLBACK, stream: false });
    expect(attemptsOf(entry)).toEqual([
      expect.objectContaining({ model: PRIMARY, provider: 'openai', ok: false, status: 429 }),
      expect.objectContaining({ model: FALLBACK, provider: 'anthropic', ok: true, status: 200 }),
    ]);
    expect(attemptsOf(entry)[0]?.error).toContain('Rate limit reached');
    expect(entry.providerRequest).toEqual(sentToAnthropic);
    expect(entry.providerResponse).toEqual(answer);
  });

  it('does not fall back when OpenAI answers 400, and passes the 400 on', async () => {
    const { user, gate } = await fallbackGate();
    openaiUpstream.upstream.reply(
      openai.errorReply('openai', 400, "Invalid value for 'temperature'", 'invalid_value'),
    );

    const res = await chat(app, user, gate.id, { messages: say('Say hello') });

    expect(res.status, await res.clone().text()).toBe(400);
    const body = (await res.json()) as NativeError;
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.message).toContain("Invalid value for 'temperature'");
    expect(anthropicUpstream.upstream.requests).toHaveLength(0);
    const [entry] = await logEntriesOf(app, gate.id);
    expect(entry).toMatchObject({ success: false, statusCode: 400, modelUsed: null });
    expect(attemptsOf(entry as never)).toEqual([
      expect.objectContaining({ model: PRIMARY, ok: false, status: 400 }),
    ]);
    // The failed entry keeps the exact JSON OpenAI received, and what it answered.
    expect((entry as { providerRequest: unknown }).providerRequest).toEqual(
      openaiUpstream.upstream.last().body,
    );
    expect(JSON.stringify((entry as { providerResponse: unknown }).providerResponse)).toContain(
      "Invalid value for 'temperature'",
    );
  });

  it('streams from Anthropic when the OpenAI stream breaks before its first byte reached the client', async () => {
    const { user, gate } = await fallbackGate();
    // OpenAI opens the stream and sends its role chunk, which has no content, then the connection drops.
    openaiUpstream.upstream.reply((request) => ({
      type: 'sse',
      frames: openai.chunkFrames('openai', request, { content: ['never sent'] }).slice(0, 1),
      ending: 'destroy',
    }));
    anthropicUpstream.upstream.reply({
      type: 'sse',
      frames: anthropic.streamFrames({
        blocks: [{ type: 'text', parts: ['Bon', 'jour', ' !'] }],
        usage: { input: 21, output: 4 },
      }),
    });

    const res = await chat(app, user, gate.id, { messages: say('Say hello'), stream: true });

    expect(res.status).toBe(200);
    expect(res.headers.get('x-gatehouse-model-used')).toBe(FALLBACK);
    const events = await sseEvents(res);
    expect(events.at(-1)).toBe('[DONE]');
    const deltas = events.filter(
      (e): e is { delta: { content?: string } } => typeof e === 'object' && e !== null && 'delta' in e,
    );
    expect(deltas.map((e) => e.delta.content)).toEqual(['Bon', 'jour', ' !']);
    expect(events.at(-2)).toMatchObject({
      done: true,
      model: FALLBACK,
      finishReason: 'stop',
      usage: { promptTokens: 21, completionTokens: 4, totalTokens: 25 },
    });
    expect(openaiUpstream.upstream.last().body).toMatchObject({ model: 'gpt-4o-mini', stream: true });
    expect(anthropicUpstream.upstream.last().body).toMatchObject({ stream: true });

    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect(entry).toMatchObject({ success: true, modelUsed: FALLBACK, stream: true });
    expect(attemptsOf(entry)).toEqual([
      expect.objectContaining({ model: PRIMARY, ok: false, status: null }),
      expect.objectContaining({ model: FALLBACK, ok: true }),
    ]);
    expect(attemptsOf(entry)[0]?.error).toMatch(/Could not reach the provider/);
    expect(entry.providerResponse).toMatchObject({ content: [{ type: 'text', text: 'Bonjour !' }] });
  });

  it('does not fall back once the first delta has reached the client; the stream ends in an error event', async () => {
    const { user, gate } = await fallbackGate();
    openaiUpstream.upstream.reply((request) => ({
      type: 'sse',
      frames: openai.chunkFrames('openai', request, { content: ['Bon', 'jour'] }).slice(0, 2),
      ending: 'destroy',
    }));

    const res = await chat(app, user, gate.id, { messages: say('Say hello'), stream: true });

    expect(res.status).toBe(200);
    expect(res.headers.get('x-gatehouse-model-used')).toBe(PRIMARY);
    const events = await sseEvents(res);
    expect(events[0]).toMatchObject({ delta: { content: 'Bon' } });
    expect(events.at(-2)).toMatchObject({ error: { code: 'upstream_error' } });
    expect(events.at(-1)).toBe('[DONE]');
    expect(anthropicUpstream.upstream.requests).toHaveLength(0);
  });
});
