import { GATE_FIELDS, READ_ONLY_GATE_FIELDS } from '@gatehouse/rules/gate';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { createGate, gateInput, graphql, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

type ErrorBody = { error: { code: string; message: string; details?: { issues?: { path: string }[] } } };

/**
 * Bad values for every settable field, each refused with an issue on that field (or on one of
 * its items: "fallbackModels.1"). A create body is a valid chat gate on mock/echo plus the value.
 */
const BAD_VALUES: Record<string, [label: string, value: unknown][]> = {
  name: [
    ['empty', ''],
    ['only spaces', '   '],
    ['101 characters long', 'n'.repeat(101)],
    ['a number', 42],
    ['null', null],
    ['with a NUL character', 'a\u0000b'],
    ['with an unpaired surrogate', 'a\ud800b'],
  ],
  description: [
    ['2001 characters long', 'd'.repeat(2001)],
    ['a number', 42],
    ['a list', ['a']],
    ['with a NUL character', 'a\u0000b'],
  ],
  autoEnhanceDescription: [
    ['the string "true"', 'true'],
    ['1', 1],
    ['null', null],
  ],
  taskType: [
    ['"text"', 'text'],
    ['upper-case "CHAT"', 'CHAT'],
    ['a number', 1],
    ['null', null],
  ],
  taskSubtype: [
    ['"fast"', 'fast'],
    ['a number', 1],
  ],
  tags: [
    ['a string', 'support'],
    ['with an empty tag', ['']],
    ['with a tag listed twice', ['a', 'a']],
    ['with 21 tags', Array.from({ length: 21 }, (_, i) => `t${i}`)],
    ['with a 51-character tag', ['t'.repeat(51)]],
    ['with a number', [1]],
    ['with a NUL character', ['a\u0000b']],
    ['null', null],
  ],
  model: [
    ['empty', ''],
    ['unknown', 'nope/nope'],
    ['a plain name no provider serves', 'no-such-model'],
    ['of another task type', 'mock/embed'],
    ['a number', 1],
    ['null', null],
  ],
  routingStrategy: [
    ['"random"', 'random'],
    ['null', null],
  ],
  fallbackModels: [
    ['with an unknown model', ['nope/nope']],
    ['with a model of another task type', ['mock/embed']],
    ['with a duplicate', ['mock/fast', 'mock/fast']],
    ['with the primary model', ['mock/echo']],
    ['with 11 models', Array.from({ length: 11 }, (_, i) => `mock/fast-${i}`)],
    ['a string', 'mock/fast'],
    ['null', null],
  ],
  systemPrompt: [
    ['100001 characters long', 's'.repeat(100_001)],
    ['a number', 1],
    ['with a NUL character', 'be brief\u0000'],
  ],
  temperature: [
    ['-0.1', -0.1],
    ['2.1', 2.1],
    ['the string "0.5"', '0.5'],
    ['true', true],
  ],
  maxTokens: [
    ['0', 0],
    ['1.5', 1.5],
    ['-1', -1],
    ['2000001', 2_000_001],
    ['the string "100"', '100'],
  ],
  topP: [
    ['1.5', 1.5],
    ['-0.01', -0.01],
    ['the string "0.5"', '0.5'],
  ],
  allowOverrides: [
    ['the string "true"', 'true'],
    ['an object with a non-boolean', { model: 'yes' }],
    ['an object with an unknown field', { stop: true }],
    ['a number', 1],
    ['null', null],
  ],
  costWeight: [
    ['2', 2],
    ['-0.1', -0.1],
    ['the string "0.5"', '0.5'],
  ],
  latencyWeight: [
    ['1.01', 1.01],
    ['-1', -1],
  ],
  qualityWeight: [
    ['2', 2],
    ['a boolean', false],
  ],
  analysisMethod: [
    ['"cheap"', 'cheap'],
    ['a number', 1],
  ],
  maxCostPer1kTokens: [
    ['-1', -1],
    ['1001', 1001],
    ['the string "1"', '1'],
  ],
  maxLatencyMs: [
    ['0', 0],
    ['1.5', 1.5],
    ['600001', 600_001],
  ],
  reanalysisPeriod: [
    ['"hourly"', 'hourly'],
    ['null', null],
  ],
  autoApplyRecommendations: [
    ['the string "false"', 'false'],
    ['null', null],
  ],
  strictHostedTools: [
    ['the string "true"', 'true'],
    ['null', null],
  ],
  responseFormatEnabled: [
    ['the string "true"', 'true'],
    ['null', null],
  ],
  responseFormatType: [
    ['"xml"', 'xml'],
    ['null', null],
  ],
  responseFormatSchema: [
    ['a string', '{"type":"object"}'],
    ['a list', [{ type: 'object' }]],
    ['a number', 1],
    ['with a NUL character in a value', { type: 'object', description: 'a\u0000b' }],
    ['with a NUL character in a nested key', { properties: { 'a\u0000': { type: 'string' } } }],
    ['with an unpaired surrogate', { type: 'object', description: ['\udc00'] }],
    ['with a "__proto__" key', { ['__proto__']: { type: 'object' } }],
    ['with a nested "__proto__" key', { properties: { ['__proto__']: null } }],
  ],
  spendingLimit: [
    ['-1', -1],
    ['the string "5"', '5'],
    ['above a billion', 1e10],
  ],
  spendingLimitPeriod: [
    ['"weekly"', 'weekly'],
    ['null', null],
  ],
  spendingEnforcement: [
    ['"hard"', 'hard'],
    ['null', null],
  ],
  endUserSpendingLimit: [
    ['0', 0],
    ['-1', -1],
    ['the string "5"', '5'],
    ['above a billion', 1e10],
  ],
  endUserSpendingLimitPeriod: [
    ['"total"', 'total'],
    ['null', null],
  ],
  spendingAlertWebhook: [
    ['blank', '  '],
    ['an ftp URL', 'ftp://example.com/hook'],
    ['not a URL', 'hooks.example.com'],
    ['a javascript: URL', 'javascript:alert(1)'],
    ['longer than 2,000 characters', `https://example.com/${'a'.repeat(2000)}`],
    ['a number', 5],
  ],
  rateLimitRpm: [
    ['0', 0],
    ['1.5', 1.5],
    ['the string "10"', '10'],
    ['above a million', 1_000_001],
  ],
  rateLimitTpm: [
    ['-1', -1],
    ['above a billion', 1_000_000_001],
  ],
  gateType: [
    ['"agents"', 'agents'],
    ['null', null],
  ],
  // On the standard gates of this matrix an agent field is refused whatever its value; the
  // agent gates' own ranges are in agent-gates.test.ts.
  agentMode: [['"auto"', 'auto']],
  orchestration: [['"random"', 'random']],
  sessionSpendingLimit: [['-1', -1]],
  sessionIdleMinutes: [
    ['0', 0],
    ['a week and a minute', 10_081],
  ],
  maxRequestsPerSession: [['0', 0]],
  visibleTools: [['a string', 'search']],
};

/** Rules that tie fields together: each body is refused with an issue on the named path. */
const CROSS_FIELD_CASES: [label: string, body: Record<string, unknown>, path: string][] = [
  [
    'a task subtype on a gate that is not a chat gate',
    { taskType: 'embeddings', model: 'mock/embed', taskSubtype: 'code' },
    'taskSubtype',
  ],
  [
    'json_schema output enabled without a schema',
    { responseFormatEnabled: true, responseFormatType: 'json_schema' },
    'responseFormatSchema',
  ],
  [
    'the custom analysis method without its weights',
    { analysisMethod: 'custom', costWeight: 1 },
    'latencyWeight',
  ],
  ['an embeddings gate on a chat model', { taskType: 'embeddings' }, 'model'],
  [
    'a fallback that is the primary model',
    { model: 'mock/fast', fallbackModels: ['mock/smart', 'mock/fast'] },
    'fallbackModels.1',
  ],
  [
    'a fallback model of another task type',
    { fallbackModels: ['mock/fast', 'mock/image'] },
    'fallbackModels.1',
  ],
];

function issuePaths(body: ErrorBody): string[] {
  return (body.error.details?.issues ?? []).map((i) => i.path);
}

function onField(paths: string[], field: string): boolean {
  return paths.some((p) => p === field || p.startsWith(`${field}.`));
}

async function expectRefused(res: Response, path: string) {
  expect(res.status).toBe(400);
  const body = (await res.json()) as ErrorBody;
  expect(body.error.code).toBe('invalid_request');
  expect(body.error.message).toEqual(expect.any(String));
  const paths = issuePaths(body);
  expect(onField(paths, path), `issues ${JSON.stringify(paths)} name ${path}`).toBe(true);
}

describe('the validation matrix', () => {
  let user: TestUser;
  let gate: Awaited<ReturnType<typeof createGate>>;
  beforeAll(async () => {
    user = await signUpUser(app);
    gate = await createGate(app, user);
  });

  it('has bad values for every settable field', () => {
    expect(Object.keys(BAD_VALUES).sort()).toEqual([...GATE_FIELDS].sort());
  });

  describe.each(Object.entries(BAD_VALUES))('%s', (field, cases) => {
    it.each(cases)(`refuses a gate created with ${field} %s`, async (_label, value) => {
      const res = await app.request('/v1/gates', {
        method: 'POST',
        headers: user.auth,
        json: gateInput({ [field]: value }),
      });
      await expectRefused(res, field);
    });

    it.each(cases)(
      `refuses an update that sets ${field} %s, leaving the gate as it was`,
      async (_l, value) => {
        const res = await app.request(`/v1/gates/${gate.id}`, {
          method: 'PATCH',
          headers: user.auth,
          json: { [field]: value },
        });
        await expectRefused(res, field);
        expect(await (await app.request(`/v1/gates/${gate.id}`, { headers: user.auth })).json()).toEqual(
          gate,
        );
      },
    );
  });

  it.each(CROSS_FIELD_CASES)('refuses %s', async (_label, body, path) => {
    const res = await app.request('/v1/gates', { method: 'POST', headers: user.auth, json: gateInput(body) });
    await expectRefused(res, path);
  });

  it.each([...READ_ONLY_GATE_FIELDS])('refuses the read-only field %s by name', async (field) => {
    for (const [method, path, json] of [
      ['POST', '/v1/gates', gateInput({ [field]: 'x' })],
      ['PATCH', `/v1/gates/${gate.id}`, { [field]: 'x' }],
    ] as const) {
      const res = await app.request(path, { method, headers: user.auth, json });
      expect(res.status, method).toBe(400);
      const body = (await res.json()) as ErrorBody;
      expect(body.error.details?.issues, method).toContainEqual({
        path: field,
        message: 'is read-only and cannot be set',
      });
    }
  });

  it('refuses an unknown field by name rather than ignoring it', async () => {
    const res = await app.request('/v1/gates', {
      method: 'POST',
      headers: user.auth,
      json: gateInput({ temprature: 0.5 }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error.details?.issues).toContainEqual({
      path: 'temprature',
      message: 'is not a gate field',
    });
    const patch = await app.request(`/v1/gates/${gate.id}`, {
      method: 'PATCH',
      headers: user.auth,
      json: { temprature: 0.5 },
    });
    await expectRefused(patch, 'temprature');
  });

  it('names each missing required field of a new gate', async () => {
    const res = await app.request('/v1/gates', { method: 'POST', headers: user.auth, json: {} });
    expect(res.status).toBe(400);
    expect(issuePaths((await res.json()) as ErrorBody).sort()).toEqual(['model', 'name', 'taskType']);
  });

  it('reports every bad field at once', async () => {
    const res = await app.request('/v1/gates', {
      method: 'POST',
      headers: user.auth,
      json: gateInput({ temperature: 3, topP: 2, routingStrategy: 'random' }),
    });
    expect(res.status).toBe(400);
    expect(issuePaths((await res.json()) as ErrorBody).sort()).toEqual([
      'routingStrategy',
      'temperature',
      'topP',
    ]);
  });

  it('never stores a refused gate', async () => {
    const res = await app.request('/v1/gates', { headers: user.auth });
    const { gates } = (await res.json()) as { gates: { id: string }[] };
    expect(gates.map((g) => g.id)).toEqual([gate.id]);
  });
});

describe('bodies that are no gate', () => {
  let user: TestUser;
  let gateId: string;
  beforeAll(async () => {
    user = await signUpUser(app);
    gateId = (await createGate(app, user)).id;
  });

  const NOT_OBJECTS: [string, string][] = [
    ['a list', '[]'],
    ['a list of a gate', JSON.stringify([gateInput()])],
    ['a string', '"gate"'],
    ['a number', '42'],
    ['null', 'null'],
    ['true', 'true'],
    ['invalid JSON', '{"name": '],
    ['JSON with a trailing comma', '{"name": "x",}'],
    ['not JSON at all', 'name=x&model=mock/echo'],
    ['empty', ''],
    ['only whitespace', '  \n '],
  ];

  for (const method of ['POST', 'PATCH'] as const) {
    it.each(NOT_OBJECTS)(`answers 400 to a ${method} whose body is %s`, async (_label, body) => {
      const path = method === 'POST' ? '/v1/gates' : `/v1/gates/${gateId}`;
      const res = await app.request(path, {
        method,
        headers: { ...user.auth, 'content-type': 'application/json' },
        body,
      });
      expect(res.status).toBe(400);
      const json = (await res.json()) as ErrorBody;
      expect(json.error.code).toBe('invalid_request');
      expect(issuePaths(json)).toEqual(['']);
    });

    it(`answers 413 to a ${method} with a 2 MB body`, async () => {
      const path = method === 'POST' ? '/v1/gates' : `/v1/gates/${gateId}`;
      const res = await app.request(path, {
        method,
        headers: user.auth,
        json: gateInput({ systemPrompt: 'x'.repeat(2 * 1024 * 1024) }),
      });
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({ error: { code: 'payload_too_large' } });
    });
  }
});

describe('values at the edges of their range', () => {
  const EDGES: [field: string, value: unknown][] = [
    ['temperature', 0],
    ['temperature', 2],
    ['topP', 0],
    ['topP', 1],
    ['costWeight', 0],
    ['latencyWeight', 1],
    ['qualityWeight', 1],
    ['maxTokens', 1],
    ['maxTokens', 2_000_000],
    ['maxCostPer1kTokens', 0],
    ['maxCostPer1kTokens', 1000],
    ['maxLatencyMs', 1],
    ['maxLatencyMs', 600_000],
    ['spendingLimit', 0],
    ['spendingLimit', 1_000_000_000],
    ['description', 'd'.repeat(2000)],
    ['systemPrompt', 's'.repeat(100_000)],
    ['tags', Array.from({ length: 20 }, (_, i) => `tag-${i}-${'x'.repeat(40)}`)],
    ['responseFormatSchema', {}],
    ['allowOverrides', true],
    ['allowOverrides', {}],
  ];

  it.each(EDGES)('accepts %s = %j on create and update, and stores it exactly', async (field, value) => {
    const user = await signUpUser(app);
    const created = await createGate(app, user, { [field]: value });
    expect(created[field]).toEqual(value);
    const other = await createGate(app, user);
    const res = await app.request(`/v1/gates/${other.id}`, {
      method: 'PATCH',
      headers: user.auth,
      json: { [field]: value },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as Record<string, unknown>)[field]).toEqual(value);
  });

  it('accepts a 100-character name', async () => {
    const user = await signUpUser(app);
    const name = `${'n'.repeat(64)}${crypto.randomUUID()}`;
    expect(name).toHaveLength(100);
    expect((await createGate(app, user, { name })).name).toBe(name);
  });

  it('accepts 10 fallback models that all serve the task type', async () => {
    const user = await signUpUser(app);
    const { data } = await graphql<{ models: { id: string }[] }>(
      app,
      user,
      'query { models(taskType: CHAT) { id } }',
    );
    const fallbackModels = (data?.models ?? [])
      .map((m) => m.id)
      .filter((id) => id !== 'mock/echo')
      .slice(0, 10);
    expect(fallbackModels).toHaveLength(10);
    const gate = await createGate(app, user, { routingStrategy: 'fallback', fallbackModels });
    expect(gate.fallbackModels).toEqual(fallbackModels);
  });
});
