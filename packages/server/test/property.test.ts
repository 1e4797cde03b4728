/**
 * Thousands of random and malformed bodies against the gate endpoints: whatever arrives, the
 * answer is a 2xx or a 4xx with a JSON error body (never a 500, never something that is not
 * JSON), and a gate changes only through an update that was accepted.
 */

import { GATE_FIELDS, READ_ONLY_GATE_FIELDS } from '@gatehouse/rules/gate';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

/** Bodies per endpoint: enough to reach the odd corners, few enough for well under a minute. */
const RUNS = 1000;

const FIELD_NAMES = [...GATE_FIELDS, ...READ_ONLY_GATE_FIELDS, 'temprature', '__proto__', 'constructor', ''];

const nastyNumber = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(1e308, -1e308, 5e-324, -0, 2 ** 31, 2 ** 53 + 2, Number.MAX_SAFE_INTEGER, 1e21),
);
const numberishString = fc.constantFrom(
  'NaN',
  'Infinity',
  '-Infinity',
  '1e309',
  '-1',
  '0x10',
  '1_000',
  ' 1 ',
  '',
);
const nastyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\uffff',
    '💥'.repeat(60),
    'x'.repeat(5000),
    'mock/echo',
    'mock/fast',
    'mock/embed',
    'chat',
    'embeddings',
    'block',
    'json_schema',
    'custom',
  ),
);

const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    nastyNumber,
    nastyString,
    numberishString,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.constantFrom(...FIELD_NAMES), fc.string()), tie('value'), { maxKeys: 4 }),
  ),
}));

/** Values a field would accept, so that some bodies pass and the success paths run too. */
const plausible: Record<string, fc.Arbitrary<unknown>> = {
  temperature: fc.double({ min: 0, max: 2, noNaN: true }),
  topP: fc.double({ min: 0, max: 1, noNaN: true }),
  maxTokens: fc.integer({ min: 1, max: 2_000_000 }),
  costWeight: fc.double({ min: 0, max: 1, noNaN: true }),
  spendingLimit: fc.oneof(fc.constant(null), fc.double({ min: 0, max: 1e9, noNaN: true })),
  tags: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 10 }), { maxLength: 5 }),
  description: fc.oneof(fc.constant(null), fc.string({ unit: 'binary', maxLength: 50 })),
  systemPrompt: fc.oneof(fc.constant(null), fc.string({ unit: 'binary', maxLength: 50 })),
  routingStrategy: fc.constantFrom('single', 'fallback', 'round-robin'),
  fallbackModels: fc.constantFrom([], ['mock/fast'], ['mock/smart', 'mock/fast']),
  allowOverrides: fc.oneof(fc.boolean(), fc.record({ model: fc.boolean() }, { requiredKeys: [] })),
  responseFormatSchema: fc.oneof(fc.constant(null), fc.dictionary(fc.string(), value, { maxKeys: 3 })),
  spendingEnforcement: fc.constantFrom('alert_only', 'block'),
  spendingLimitPeriod: fc.constantFrom('daily', 'monthly'),
};

/** Real field names with random or plausible values, over a valid gate or alone. */
const gateLike = fc.record({
  base: fc.boolean(),
  fields: fc.dictionary(fc.constantFrom(...FIELD_NAMES), value, { maxKeys: 4 }),
  good: fc.record(plausible, { requiredKeys: [] }),
});

type Body = { text: string; raw: boolean };

const body: fc.Arbitrary<Body> = fc.oneof(
  fc.anything().map((v) => ({ text: JSON.stringify(v) ?? '', raw: false })),
  fc.json().map((text) => ({ text, raw: false })),
  fc.string({ unit: 'binary', maxLength: 60 }).map((text) => ({ text, raw: true })),
  value.map((v) => ({ text: JSON.stringify(v), raw: false })),
  {
    weight: 2,
    arbitrary: gateLike.map(({ base, fields, good }) => ({
      text: JSON.stringify({
        ...(base && { name: '', model: 'mock/echo', taskType: 'chat' }),
        ...good,
        ...fields,
      }),
      raw: false,
    })),
  },
  // Mostly valid: the success paths (and what they store) get their share of the runs.
  {
    weight: 2,
    arbitrary: gateLike.map(({ good }) => ({
      text: JSON.stringify({ name: '', model: 'mock/echo', taskType: 'chat', ...good }),
      raw: false,
    })),
  },
);

let counter = 0;

/** Gives the body a fresh name where it names a gate, so successes do not collide on it. */
function withFreshName(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (
      parsed &&
      typeof parsed === 'object' &&
      !Array.isArray(parsed) &&
      (parsed as { name?: unknown }).name === ''
    ) {
      return JSON.stringify({ ...parsed, name: `fuzz-${++counter}` });
    }
  } catch {}
  return text;
}

type Answer = { status: number; json: Record<string, unknown> };

async function send(user: TestUser, method: 'POST' | 'PATCH', path: string, text: string): Promise<Answer> {
  const res = await app.request(path, {
    method,
    headers: { ...user.auth, 'content-type': 'application/json' },
    body: text,
  });
  const raw = await res.text();
  const context = `${method} ${path} ${text.slice(0, 300)} → ${res.status} ${raw.slice(0, 300)}`;
  expect(res.status, context).toBeGreaterThanOrEqual(200);
  expect(res.status, context).toBeLessThan(500);
  expect(res.headers.get('content-type'), context).toMatch(/^application\/json/);
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    throw new Error(`not JSON: ${context}`);
  }
  if (res.status >= 400) {
    const error = json.error as { code?: unknown; message?: unknown } | undefined;
    expect(typeof error?.code, context).toBe('string');
    expect(typeof error?.message, context).toBe('string');
  }
  return { status: res.status, json };
}

describe('random bodies', () => {
  let user: TestUser;
  let gate: Record<string, unknown> & { id: string };

  beforeAll(async () => {
    user = await signUpUser(app);
    gate = await createGate(app, user, { tags: ['original'], systemPrompt: 'Keep me', temperature: 0.5 });
  });

  it('never make POST /v1/gates fail with a 500 or answer without a JSON error', async () => {
    let created = 0;
    await fc.assert(
      fc.asyncProperty(body, async ({ text, raw }) => {
        const answer = await send(user, 'POST', '/v1/gates', raw ? text : withFreshName(text));
        if (answer.status === 201) {
          created++;
          // Keeps the account under its plan limit, so later valid bodies still get through.
          const del = await app.request(`/v1/gates/${String(answer.json.id)}`, {
            method: 'DELETE',
            headers: user.auth,
          });
          expect(del.status).toBe(204);
        } else {
          expect(answer.status).not.toBe(200);
        }
      }),
      { numRuns: RUNS },
    );
    // The generators reach the success path too, or this would prove less than it claims.
    expect(created).toBeGreaterThan(0);
    const list = await app.request('/v1/gates', { headers: user.auth });
    expect(((await list.json()) as { gates: { id: string }[] }).gates.map((g) => g.id)).toEqual([gate.id]);
  }, 60_000);

  it('never make PATCH /v1/gates/:id fail with a 500, and change the gate only when accepted', async () => {
    let expected = gate;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(body, async ({ text, raw }) => {
        const answer = await send(user, 'PATCH', `/v1/gates/${gate.id}`, raw ? text : withFreshName(text));
        if (answer.status === 200) {
          accepted++;
          expect(answer.json.id).toBe(gate.id);
          expected = answer.json as typeof gate;
        }
      }),
      { numRuns: RUNS },
    );
    expect(accepted).toBeGreaterThan(0);
    const res = await app.request(`/v1/gates/${gate.id}`, { headers: user.auth });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(expected);
  }, 60_000);
});

it('leaves a gate exactly as it was after any number of refused updates', async () => {
  const user = await signUpUser(app);
  const gate = await createGate(app, user, { description: 'untouched' });
  await fc.assert(
    fc.asyncProperty(
      fc.dictionary(fc.constantFrom(...FIELD_NAMES), value, { minKeys: 1, maxKeys: 4 }),
      async (fields) => {
        // One bad field makes the whole update refused, whatever else it carries.
        const answer = await send(
          user,
          'PATCH',
          `/v1/gates/${gate.id}`,
          JSON.stringify({ ...fields, temperature: 9 }),
        );
        expect(answer.status).toBe(400);
      },
    ),
    { numRuns: 200 },
  );
  const res = await app.request(`/v1/gates/${gate.id}`, { headers: user.auth });
  expect(await res.json()).toEqual(gate);
}, 60_000);
