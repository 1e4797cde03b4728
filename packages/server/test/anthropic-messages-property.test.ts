/**
 * Random Messages requests, near-valid and malformed, against /v1/messages on a mock gate: the
 * answer is a message, a stream of Anthropic's events, or a 400 invalid_request_error in
 * Anthropic's shape; never a 500.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

/** Bodies per run: enough to reach the odd corners, few enough for a few seconds. */
const RUNS = 300;

const junk = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.double(),
  fc.integer(),
  fc.string({ maxLength: 12 }),
  fc.constantFrom('\u0000', '\ud800', '💥', '__proto__', ''),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 }),
);
/** Mostly the right kind of value, so that many bodies get through to the provider, sometimes not. */
const maybe = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof(
    { arbitrary: arb, weight: 20 },
    { arbitrary: junk, weight: 1 },
    { arbitrary: fc.constant(undefined), weight: 1 },
  );
const cache = maybe(fc.constantFrom({ type: 'ephemeral' }, { type: 'ephemeral', ttl: '1h' }));

const textBlock = fc.record({ type: fc.constant('text'), text: maybe(fc.string()), cache_control: cache });
const block = fc.oneof(
  textBlock,
  fc.record({
    type: fc.constant('image'),
    source: maybe(
      fc.oneof(
        fc.record({
          type: fc.constant('base64'),
          media_type: fc.constantFrom('image/png', 'image/bmp'),
          data: fc.base64String({ maxLength: 16 }),
        }),
        fc.record({ type: fc.constant('url'), url: fc.constantFrom('https://example.com/a.png', 'nope') }),
      ),
    ),
  }),
  fc.record({
    type: fc.constant('tool_use'),
    id: maybe(fc.constantFrom('toolu_1', 'toolu_2')),
    name: maybe(fc.constantFrom('get_weather', 'Read')),
    input: maybe(fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 })),
  }),
  fc.record({
    type: fc.constant('tool_result'),
    tool_use_id: maybe(fc.constantFrom('toolu_1', 'toolu_2')),
    content: maybe(
      fc.oneof(fc.string(), fc.array(fc.record({ type: fc.constant('text'), text: fc.string() }))),
    ),
    is_error: maybe(fc.boolean()),
  }),
  fc.record({ type: fc.constant('thinking'), thinking: maybe(fc.string()), signature: maybe(fc.string()) }),
  fc.record({
    type: fc.constantFrom('redacted_thinking', 'document', 'server_tool_use'),
    data: maybe(fc.string()),
  }),
);

const message = fc.record({
  role: fc.constantFrom('user', 'assistant', 'user', 'assistant', 'user', 'system'),
  content: fc.oneof(
    { arbitrary: fc.string({ maxLength: 20 }), weight: 4 },
    { arbitrary: fc.array(textBlock, { minLength: 1, maxLength: 3 }), weight: 4 },
    { arbitrary: fc.array(block, { minLength: 1, maxLength: 4 }), weight: 2 },
    { arbitrary: junk, weight: 1 },
  ),
});

const body = fc.record(
  {
    model: maybe(fc.constantFrom('mock/echo', 'claude-sonnet-4-5', 'mock/nope')),
    max_tokens: maybe(fc.integer({ min: 0, max: 5000 })),
    messages: maybe(fc.array(message, { minLength: 1, maxLength: 4 })),
    system: maybe(fc.oneof(fc.string(), fc.array(block, { maxLength: 2 }))),
    tools: maybe(
      fc.array(
        fc.record({
          name: maybe(fc.constantFrom('get_weather', 'Read', 'bad name', '')),
          input_schema: maybe(fc.constant({ type: 'object', properties: {} })),
          type: fc.option(fc.constantFrom('custom', 'web_search_20250305'), { nil: undefined }),
          cache_control: cache,
        }),
        { maxLength: 3 },
      ),
    ),
    tool_choice: maybe(
      fc.record({ type: fc.constantFrom('auto', 'any', 'tool', 'none', 'some'), name: maybe(fc.string()) }),
    ),
    thinking: maybe(
      fc.record({
        type: fc.constantFrom('enabled', 'disabled', 'adaptive'),
        budget_tokens: maybe(fc.integer()),
      }),
    ),
    stop_sequences: maybe(fc.array(fc.string(), { maxLength: 3 })),
    temperature: maybe(fc.double({ min: -0.5, max: 1.5, noNaN: true })),
    top_p: maybe(fc.double({ min: -0.5, max: 1.5, noNaN: true })),
    metadata: maybe(fc.record({ user_id: maybe(fc.string()) })),
    stream: maybe(fc.boolean()),
  },
  { requiredKeys: ['model', 'max_tokens', 'messages'] },
);

/** Bodies built from valid parts only, so that many reach the provider and come back. */
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const goodText = fc.record({
  type: fc.constant('text'),
  text: fc.string({ minLength: 1, maxLength: 20 }),
  cache_control: optional(fc.constant({ type: 'ephemeral' })),
});
const goodImage = fc.constant({
  type: 'image',
  source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
});
const goodBody = fc.record(
  {
    model: fc.constantFrom('mock/echo', 'claude-sonnet-4-5'),
    max_tokens: fc.integer({ min: 1, max: 5000 }),
    messages: fc.array(
      fc.oneof(
        fc.record({
          role: fc.constant('user'),
          content: fc.oneof(
            fc.string(),
            fc.array(fc.oneof(goodText, goodImage), { minLength: 1, maxLength: 3 }),
          ),
        }),
        fc.record({ role: fc.constant('assistant'), content: fc.oneof(fc.string(), fc.array(goodText)) }),
      ),
      { minLength: 1, maxLength: 4 },
    ),
    system: fc.oneof(fc.string(), fc.array(goodText, { maxLength: 2 })),
    tools: fc.array(
      fc.record({
        name: fc.constantFrom('get_weather', 'Read'),
        input_schema: fc.constant({ type: 'object', properties: {} }),
      }),
      { maxLength: 2 },
    ),
    tool_choice: fc.constantFrom({ type: 'auto' }, { type: 'any' }, { type: 'none' }),
    stop_sequences: fc.array(fc.string({ minLength: 1 }), { maxLength: 2 }),
    temperature: fc.double({ min: 0, max: 1, noNaN: true }),
    stream: fc.boolean(),
  },
  { requiredKeys: ['model', 'max_tokens', 'messages'] },
);

describe('random bodies on POST /v1/messages', () => {
  let user: TestUser;
  let gateId = '';
  beforeAll(async () => {
    user = await signUpUser(app);
    gateId = (
      await createGate(app, user, { allowOverrides: { temperature: true, maxTokens: true, topP: true } })
    ).id;
  });

  it('answers a message, a stream or a 400 invalid_request_error, never a 500', async () => {
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(goodBody, body), async (b) => {
        const res = await app.request('/v1/messages', {
          method: 'POST',
          headers: {
            'x-api-key': user.key,
            'x-gatehouse-gate-id': gateId,
            'anthropic-version': '2023-06-01',
          },
          json: b,
        });
        const text = await res.text();
        expect([200, 400], text).toContain(res.status);
        if (res.status === 200) answered += 1;
        if (res.status === 400) {
          expect(JSON.parse(text)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
        } else if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
          expect(text).toContain('event: message_stop');
        } else {
          expect(JSON.parse(text)).toMatchObject({ type: 'message', role: 'assistant' });
        }
      }),
      { numRuns: RUNS },
    );
    // The bodies reached the provider often enough for the answers to have been checked too.
    expect(answered).toBeGreaterThan(RUNS / 5);
  }, 120_000);
});
