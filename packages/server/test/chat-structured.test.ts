import { Ajv } from 'ajv';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import {
  answerOf,
  attemptsOf,
  chat,
  completions,
  logEntriesOf,
  logEntryOf,
  type NativeError,
  say,
} from './support/chat.ts';
import { createGate, signUpUser } from './support/factories.ts';
import { startFakeOpenAI } from './support/upstream.ts';

// openai/gpt-4o-mini is answered by a local server in OpenAI's wire format: a model that is not
// the mock, so that a fallback can answer where [mock:badjson] spoils every mock model.
const upstream = await startFakeOpenAI();
const app = useTestApp({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: upstream.url });
afterAll(() => upstream.close());

const WEATHER_SCHEMA = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    temperatureC: { type: 'number' },
    conditions: { type: 'string', enum: ['sunny', 'rain', 'snow'] },
  },
  required: ['city', 'temperatureC', 'conditions'],
  additionalProperties: false,
};
const matchesWeather = new Ajv().compile(WEATHER_SCHEMA);

const schemaGate = (overrides: Record<string, unknown> = {}) => ({
  responseFormatEnabled: true,
  responseFormatType: 'json_schema',
  responseFormatSchema: WEATHER_SCHEMA,
  ...overrides,
});

describe('structured output', () => {
  it('answers JSON that parses and matches the gate json_schema', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, schemaGate());
    const answer = await answerOf(await chat(app, user, gate.id, { messages: say('weather in Oslo?') }));
    const value = JSON.parse(answer.content as string);
    expect(matchesWeather(value), JSON.stringify(matchesWeather.errors)).toBe(true);
    const entry = await logEntryOf(app, answer.id);
    // The mock takes JSON schemas natively: the schema travels as response_format, not in the prompt.
    expect(entry.providerRequest).toMatchObject({
      responseFormat: { type: 'json_schema', json_schema: { schema: WEATHER_SCHEMA, strict: true } },
      messages: [{ role: 'user', content: 'weather in Oslo?' }],
    });
  });

  it('sends the gate schema to a provider with native JSON schema support', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, schemaGate({ model: 'openai/gpt-4o-mini' }));
    upstream.reply(() => JSON.stringify({ city: 'Oslo', temperatureC: -3, conditions: 'snow' }));
    const answer = await answerOf(await chat(app, user, gate.id));
    expect(JSON.parse(answer.content as string)).toEqual({
      city: 'Oslo',
      temperatureC: -3,
      conditions: 'snow',
    });
    expect(upstream.received.at(-1)?.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'gate_response', schema: WEATHER_SCHEMA, strict: true },
    });
  });

  it('falls back when the primary answers text that is not JSON, logging the attempt error', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(
      app,
      user,
      schemaGate({ routingStrategy: 'fallback', model: 'mock/echo', fallbackModels: ['openai/gpt-4o-mini'] }),
    );
    upstream.reply(() => JSON.stringify({ city: 'Bergen', temperatureC: 9, conditions: 'rain' }));
    const answer = await answerOf(
      await chat(app, user, gate.id, { messages: say('[mock:badjson] weather?') }),
    );
    expect(answer.model).toBe('openai/gpt-4o-mini');
    expect(JSON.parse(answer.content as string)).toMatchObject({ city: 'Bergen' });
    const entry = await logEntryOf(app, answer.id);
    const [bad, good] = attemptsOf(entry);
    expect(bad).toMatchObject({ model: 'mock/echo', ok: false });
    expect(bad?.error).toMatch(/not valid JSON/);
    expect(good).toMatchObject({ model: 'openai/gpt-4o-mini', ok: true });
    expect(entry).toMatchObject({ success: true, modelUsed: 'openai/gpt-4o-mini' });
  });

  it('falls back when the primary answers JSON that breaks the schema', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(
      app,
      user,
      schemaGate({ routingStrategy: 'fallback', model: 'openai/gpt-4o-mini', fallbackModels: ['mock/echo'] }),
    );
    upstream.reply(() => JSON.stringify({ city: 'Oslo', temperatureC: 'cold', conditions: 'snow' }));
    const answer = await answerOf(await chat(app, user, gate.id));
    expect(answer.model).toBe('mock/echo');
    expect(matchesWeather(JSON.parse(answer.content as string))).toBe(true);
    const entry = await logEntryOf(app, answer.id);
    expect(attemptsOf(entry)[0]?.error).toMatch(/does not match the schema: \/temperatureC/);
  });

  it('answers 502 when no model keeps the contract, each failure logged as an attempt', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(
      app,
      user,
      schemaGate({ routingStrategy: 'fallback', model: 'mock/echo', fallbackModels: ['mock/fast'] }),
    );
    const res = await chat(app, user, gate.id, { messages: say('[mock:badjson] weather?') });
    expect(res.status).toBe(502);
    expect(((await res.json()) as NativeError).error.code).toBe('upstream_error');
    const [entry] = await logEntriesOf(app, gate.id);
    expect(entry?.success).toBe(false);
    const attempts = attemptsOf(entry as never);
    expect(attempts.map((a) => a.model)).toEqual(['mock/echo', 'mock/fast']);
    for (const a of attempts) expect(a.error).toMatch(/not valid JSON/);
  });

  it('never streams an answer that breaks the contract: the client gets an ordinary error', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, schemaGate());
    const res = await chat(app, user, gate.id, { stream: true, messages: say('[mock:badjson] weather?') });
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
  });

  it('answers a JSON object in json_object mode', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      responseFormatEnabled: true,
      responseFormatType: 'json_object',
    });
    const answer = await answerOf(await chat(app, user, gate.id, { messages: say('tell me') }));
    const value = JSON.parse(answer.content as string);
    expect(typeof value).toBe('object');
    expect(Array.isArray(value)).toBe(false);
    const entry = await logEntryOf(app, answer.id);
    expect(entry.providerRequest).toMatchObject({ responseFormat: { type: 'json_object' } });
  });

  it('refuses text that is no JSON object in json_object mode', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      model: 'openai/gpt-4o-mini',
      responseFormatEnabled: true,
      responseFormatType: 'json_object',
    });
    upstream.reply(() => '[1, 2, 3]');
    const res = await chat(app, user, gate.id);
    expect(res.status).toBe(502);
    expect(((await res.json()) as NativeError).error.message).toMatch(/not an object/);
  });

  it('keeps the gate contract over a different response_format from the client', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, schemaGate());
    const res = await completions(app, user, gate.id, { response_format: { type: 'json_object' } });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(matchesWeather(JSON.parse(body.choices[0]?.message.content as string))).toBe(true);
  });

  it('applies a client json_schema on a gate without a contract of its own', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await completions(app, user, gate.id, {
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'weather', schema: WEATHER_SCHEMA, strict: true },
      },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(matchesWeather(JSON.parse(body.choices[0]?.message.content as string))).toBe(true);
  });
});
