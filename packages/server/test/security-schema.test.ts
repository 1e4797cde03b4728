/**
 * JSON schemas from clients and gate owners, where a regular expression or the schema's own
 * size could stall the process: patterns run on an engine that cannot backtrack, schemas that
 * can never compile are refused when given (a gate's when it is saved), and size and depth are
 * bounded. A pattern that backtracks catastrophically would hang these tests past their
 * timeout, and the whole process with them.
 */

import { jsonShapeProblem, RESPONSE_SCHEMA_LIMITS } from '@gatehouse/rules/jsonLimits';
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { chat, completions, type NativeError, type OpenAIError, say } from './support/chat.ts';
import { createGate, gateInput, graphql, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

/** Exponential for a backtracking engine on a near-match: 2^n steps for n letters. */
const EVIL_PATTERN = '^(a+)+$';
/** Long enough that a backtracking engine takes minutes; RE2 takes microseconds. */
const NEAR_MATCH = `${'a'.repeat(32)}!`;
/** The mock answers a schema's `const`, so the model's answer is the near-match itself. */
const evilSchema = { type: 'string', pattern: EVIL_PATTERN, const: NEAR_MATCH };

const jsonSchemaFormat = (schema: unknown) => ({
  type: 'json_schema',
  json_schema: { name: 'answer', schema, strict: true },
});

const schemaGate = (schema: unknown) => ({
  responseFormatEnabled: true,
  responseFormatType: 'json_schema',
  responseFormatSchema: schema,
});

/** A schema nesting objects and arrays `depth` deep in its JSON (the outermost counts as 1). */
function nested(depth: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let i = 1; i < depth; i++) schema = { type: 'array', items: schema };
  return schema;
}

/** A flat schema whose JSON text is at least `bytes` long, in few members (long descriptions). */
function wide(bytes: number): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; JSON.stringify(properties).length < bytes; i++) {
    properties[`field_${i}`] = { type: 'string', description: 'x'.repeat(2000) };
  }
  return { type: 'object', properties };
}

/** A string schema for each pattern, under properties p0, p1, … */
const withPatterns = (patterns: string[]) => ({
  type: 'object',
  properties: Object.fromEntries(patterns.map((pattern, i) => [`p${i}`, { type: 'string', pattern }])),
});

const { maxPatterns, maxPatternLength, maxPatternsLength, maxRepeat } = RESPONSE_SCHEMA_LIMITS;

/**
 * Under 64 KB and within the members bound, yet 250 patterns that RE2 writes out a thousand times
 * each: compiled, 1,200 of them held the main thread for seconds and ~91 MB per cached validator,
 * until the heap ran out.
 */
const ATTACK = withPatterns(Array.from({ length: 250 }, (_, i) => `[^x]{1000}N${i}`));

/** Schemas that can never be used, each with the words the refusal must contain. */
const UNUSABLE: [string, unknown, RegExp][] = [
  ['a $ref to a URL', { $ref: 'https://example.com/schema.json' }, /resolve|reference|\$ref/i],
  ['a lookahead', { type: 'string', pattern: '^(?=a)a+$' }, /pattern|regular expression/i],
  ['a backreference', { type: 'string', pattern: '^(a)\\1$' }, /pattern|regular expression/i],
  ['a named backreference', { type: 'string', pattern: '^(?<x>a)\\k<x>$' }, /pattern|regular expression/i],
  [
    'a lookahead in patternProperties',
    { type: 'object', patternProperties: { '^(?!x)': { type: 'string' } } },
    /pattern/i,
  ],
  ['an unclosed class', { type: 'string', pattern: '[a' }, /pattern|regular expression/i],
  ['a keyword of the wrong type', { type: 'object', required: 'name' }, /schema/i],
  ['too deep', nested(RESPONSE_SCHEMA_LIMITS.maxDepth + 1), /deep|nest/i],
  ['too large', wide(RESPONSE_SCHEMA_LIMITS.maxBytes + 1), /bytes|large/i],
  [
    'too many patterns',
    withPatterns(Array.from({ length: maxPatterns + 1 }, (_, i) => `^a${i}$`)),
    /patterns/,
  ],
  [
    'too many patternProperties',
    {
      type: 'object',
      patternProperties: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`^a${i}`, {}])),
    },
    /patterns/,
  ],
  ['a pattern too long', withPatterns([`^${'a'.repeat(maxPatternLength)}$`]), /characters/],
  [
    'patterns too long together',
    withPatterns(Array.from({ length: 5 }, (_, i) => `${i}${'a'.repeat(Math.ceil(maxPatternsLength / 5))}`)),
    /together/,
  ],
  ['a count over the limit', withPatterns([`[^x]{${maxRepeat + 1}}N`]), new RegExp(`\\{${maxRepeat + 1}\\}`)],
  ['a count range over the limit', withPatterns([`^a{1,${maxRepeat + 1}}$`]), /repeat/],
  ['an open count over the limit', withPatterns([`^a{${maxRepeat + 1},}$`]), /repeat/],
  [
    'a count over the limit in patternProperties',
    { type: 'object', patternProperties: { [`^a{${maxRepeat * 10}}`]: {} } },
    /repeat/,
  ],
  [
    'counts that multiply past the limit written out',
    withPatterns(Array.from({ length: 5 }, (_, i) => `((a{10}){10}){10}${i}`)),
    /written out/,
  ],
];

async function ready() {
  const res = await app.request('/readyz');
  expect(res.status).toBe(200);
}

describe('a pattern that backtracks catastrophically', () => {
  it('is checked promptly against a client’s per-request schema on /v1/chat/completions', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await completions(app, user, gate.id, { response_format: jsonSchemaFormat(evilSchema) });
    const body = (await res.json()) as OpenAIError;
    expect(res.status, JSON.stringify(body)).toBe(502);
    expect(body.error.message).toMatch(/does not match the schema/);
    await ready();
  });

  it('is checked promptly against a client’s per-request schema on /v3/chat', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await chat(app, user, gate.id, { responseFormat: jsonSchemaFormat(evilSchema) });
    const body = (await res.json()) as NativeError;
    expect(res.status, JSON.stringify(body)).toBe(502);
    expect(body.error.message).toMatch(/does not match the schema/);
    await ready();
  });

  it('is checked promptly against a gate’s stored schema, and a matching answer passes', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, schemaGate(evilSchema));
    const res = await chat(app, user, gate.id, { messages: say('go') });
    expect(res.status, await res.clone().text()).toBe(502);
    await ready();
    const matching = await createGate(app, user, schemaGate({ ...evilSchema, const: 'a'.repeat(32) }));
    const ok = await chat(app, user, matching.id);
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(JSON.parse(((await ok.json()) as { content: string }).content)).toBe('a'.repeat(32));
  });

  it('keeps the JavaScript pattern syntax clients write: escapes, classes, \\u and \\d', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(
      app,
      user,
      schemaGate({ type: 'string', pattern: '^\\d{3}-[\\w.]+\\u00e9\\/$', const: '123-a.b_cé/' }),
    );
    const res = await chat(app, user, gate.id);
    expect(res.status, await res.clone().text()).toBe(200);
  });
});

describe('patterns that would cost seconds and megabytes to compile', () => {
  it('are refused promptly with a 400 per request, on /v3/chat and /v1/chat/completions', async () => {
    expect(JSON.stringify(ATTACK).length).toBeLessThan(RESPONSE_SCHEMA_LIMITS.maxBytes);
    expect(jsonShapeProblem(ATTACK, RESPONSE_SCHEMA_LIMITS)).toBeNull();
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const started = performance.now();
    const res = await chat(app, user, gate.id, { responseFormat: jsonSchemaFormat(ATTACK) });
    const body = (await res.json()) as NativeError;
    expect(res.status, JSON.stringify(body).slice(0, 500)).toBe(400);
    expect(body.error.details?.issues?.[0]?.path).toMatch(/^responseFormat/);
    expect(body.error.message).toMatch(`at most ${maxPatterns} patterns`);
    const openAI = await completions(app, user, gate.id, { response_format: jsonSchemaFormat(ATTACK) });
    const openAIBody = (await openAI.json()) as OpenAIError;
    expect(openAI.status, JSON.stringify(openAIBody).slice(0, 500)).toBe(400);
    expect(openAIBody.error.param).toMatch(/^response_?[fF]ormat/);
    // Compiled, each took 2 to 4.6 seconds.
    expect(performance.now() - started).toBeLessThan(1500);
    await ready();
  });

  it('are refused promptly with a 400 when a gate is saved', async () => {
    const user = await signUpUser(app);
    const started = performance.now();
    const res = await app.request('/v1/gates', {
      method: 'POST',
      headers: user.auth,
      json: gateInput(schemaGate(ATTACK)),
    });
    const body = (await res.json()) as NativeError;
    expect(res.status, JSON.stringify(body).slice(0, 500)).toBe(400);
    expect(body.error.details?.issues?.map((i) => i.path)).toContain('responseFormatSchema');
    expect(performance.now() - started).toBeLessThan(1500);
  });
});

describe('a schema that can never be used', () => {
  it.each(UNUSABLE)('(%s) is a 400 naming responseFormat on /v3/chat', async (_name, schema, words) => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await chat(app, user, gate.id, { responseFormat: jsonSchemaFormat(schema) });
    const body = (await res.json()) as NativeError;
    expect(res.status, JSON.stringify(body).slice(0, 500)).toBe(400);
    expect(body.error.details?.issues?.[0]?.path).toMatch(/^responseFormat/);
    expect(body.error.message).toMatch(words);
  });

  it.each(UNUSABLE)('(%s) is a 400 naming response_format on /v1/chat/completions', async (_n, schema) => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await completions(app, user, gate.id, { response_format: jsonSchemaFormat(schema) });
    const body = (await res.json()) as OpenAIError;
    expect(res.status, JSON.stringify(body).slice(0, 500)).toBe(400);
    expect(body.error.param).toMatch(/^response_?[fF]ormat/);
  });

  it.each(UNUSABLE)(
    '(%s) is refused when a gate is created or updated over REST',
    async (_n, schema, words) => {
      const user = await signUpUser(app);
      const created = await app.request('/v1/gates', {
        method: 'POST',
        headers: user.auth,
        json: gateInput(schemaGate(schema)),
      });
      await expectRefused(created, words);
      const gate = await createGate(app, user);
      const updated = await app.request(`/v1/gates/${gate.id}`, {
        method: 'PATCH',
        headers: user.auth,
        json: schemaGate(schema),
      });
      await expectRefused(updated, words);
      // Stored as it was: the gate still answers.
      const res = await chat(app, user, gate.id);
      expect(res.status, await res.clone().text()).toBe(200);
    },
  );

  it.each(UNUSABLE)('(%s) is a ValidationError from createGate and updateGate', async (_n, schema) => {
    const user = await signUpUser(app);
    // GraphQL spells the choices as enum values.
    const input = { ...schemaGate(schema), responseFormatType: 'JSON_SCHEMA' };
    await expectValidationError(user, 'createGate', { input: gateInput({ ...input, taskType: 'CHAT' }) });
    const gate = await createGate(app, user);
    await expectValidationError(user, 'updateGate', { id: gate.id, input });
  });

  async function expectRefused(res: Response, words: RegExp) {
    const body = (await res.json()) as NativeError;
    expect(res.status, JSON.stringify(body).slice(0, 500)).toBe(400);
    expect(body.error.code).toBe('invalid_request');
    const issue = body.error.details?.issues?.find((i) => i.path === 'responseFormatSchema');
    expect(issue, JSON.stringify(body.error.details)).toBeDefined();
    expect(issue?.message).toMatch(words);
  }

  const MUTATIONS = {
    createGate: `mutation($input: GateInput!) {
      createGate(input: $input) { __typename ... on ValidationError { issues { path message } } } }`,
    updateGate: `mutation($id: ID!, $input: GateInput!) {
      updateGate(id: $id, input: $input) { __typename ... on ValidationError { issues { path message } } } }`,
  };

  async function expectValidationError(
    user: TestUser,
    name: keyof typeof MUTATIONS,
    variables: Record<string, unknown>,
  ) {
    const res = await graphql<Record<string, { __typename: string; issues?: { path: string }[] }>>(
      app,
      user,
      MUTATIONS[name],
      variables,
    );
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    expect(res.data?.[name]?.__typename).toBe('ValidationError');
    expect(res.data?.[name]?.issues?.map((i) => i.path)).toContain('responseFormatSchema');
  }
});

describe('the limits themselves', () => {
  it('accept a schema exactly as deep and nearly as large as allowed, on a gate and per request', async () => {
    const user = await signUpUser(app);
    const deep = nested(RESPONSE_SCHEMA_LIMITS.maxDepth);
    const large = wide(RESPONSE_SCHEMA_LIMITS.maxBytes - 1024);
    for (const schema of [deep, large]) {
      const gate = await createGate(app, user, schemaGate(schema));
      expect(gate.responseFormatSchema).toEqual(schema);
      const plain = await createGate(app, user);
      const res = await chat(app, user, plain.id, { responseFormat: jsonSchemaFormat(schema) });
      expect(res.status, (await res.clone().text()).slice(0, 300)).toBe(200);
    }
  });

  it('accept distinct schemas with patterns near every limit, on a gate and per request', async () => {
    const user = await signUpUser(app);
    const words = (n: number, width: number) =>
      Array.from({ length: n }, (_, i) => `w${String(i).padStart(width, '0')}`).join('|');
    const nearLimits = [
      // As many patterns as allowed, each repeating as often as allowed.
      Array.from({ length: maxPatterns }, (_, i) => `^[a-z]{1,${maxRepeat}}$|^${i}$`),
      // Patterns as long as allowed, together nearly as long as allowed.
      Array.from({ length: 4 }, (_, i) => {
        const start = `^(mock|${words(140, 4)}|x${i}|`;
        return `${start}${'z'.repeat(maxPatternLength - start.length - 2)})$`;
      }),
      // Counts that multiply to nearly as much as may be written out.
      Array.from({ length: 4 }, (_, i) => `^(?:[a-z]{1,${maxRepeat}}){1,10}$|^${i}$`),
    ];
    for (const patterns of nearLimits) {
      expect(patterns.join('').length).toBeLessThanOrEqual(maxPatternsLength);
      expect(Math.max(...patterns.map((p) => p.length))).toBeLessThanOrEqual(maxPatternLength);
      // Every pattern matches the mock's answer for a string, "mock".
      const schema = withPatterns(patterns);
      const gate = await createGate(app, user, schemaGate(schema));
      const stored = await chat(app, user, gate.id);
      expect(stored.status, (await stored.clone().text()).slice(0, 300)).toBe(200);
      const plain = await createGate(app, user);
      const res = await chat(app, user, plain.id, { responseFormat: jsonSchemaFormat(schema) });
      expect(res.status, (await res.clone().text()).slice(0, 300)).toBe(200);
    }
  });

  it('refuse a per-request schema nested 400 deep with a 400, not a crash', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    // Past the schema's bound (64) and within the body's (512): the schema's own check names it.
    const schema = `${'{"type":"array","items":'.repeat(400)}{"type":"string"}${'}'.repeat(400)}`;
    const res = await app.request('/v3/chat', {
      method: 'POST',
      headers: { ...user.auth, 'content-type': 'application/json' },
      body: `{"gateId":"${gate.id}","data":{"messages":${JSON.stringify(say('hi'))},"responseFormat":{"type":"json_schema","json_schema":{"name":"deep","schema":${schema}}}}}`,
    });
    const body = (await res.json()) as NativeError;
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(body.error.details?.issues?.[0]?.path).toMatch(/^responseFormat/);
    await ready();
  });
});
