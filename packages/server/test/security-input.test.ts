/**
 * Bad input that used to reach the database or the stack as it came: dates PostgreSQL cannot
 * store, cursors forged to carry them, a gate's response schema nested thousands deep, and a
 * forged GraphQL gates cursor. Each is a 400 (REST) or BAD_USER_INPUT / ValidationError (GraphQL)
 * that names the field, never a 500 or a masked error.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { createGate, gateInput, graphql, signUpUser, type TestUser } from './support/factories.ts';
import { expectBadParam } from './support/logs.ts';

const app = useTestApp();

/** A log page cursor as the API makes them, carrying whatever time it is given. */
const logCursor = (time: string, id: string = randomUUID()) =>
  Buffer.from(`${time}|${id}`).toString('base64url');

const OUT_OF_RANGE = [
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00Z',
  '1969-12-31T23:59:59Z',
  '+275760-09-13T00:00:00Z',
  '-271821-04-20T00:00:00Z',
];

const FORGED_LOG_CURSORS = [
  logCursor('0000-01-01T00:00:00.000Z'),
  logCursor('+275760-09-13T00:00:00.000Z'),
  logCursor('-271821-04-20T00:00:00.000Z'),
  logCursor('-000001-01-01T00:00:00.000Z'),
  logCursor('0'),
  logCursor('2025-01-01T00:00:00.000Z', 'not-a-uuid'),
];

/**
 * A schema nested `levels` times, as JSON text: built as text because JSON.stringify itself
 * overflows the stack on it, here as on the server.
 */
const nestedSchemaText = (levels: number) =>
  `${'{"type":"object","properties":{"a":'.repeat(levels)}{"type":"string"}${'}}'.repeat(levels)}`;

/** A JSON body with `schemaText` spliced in as the value of its "responseFormatSchema". */
const withSchema = (fields: Record<string, unknown>, schemaText: string) =>
  `${JSON.stringify(fields).slice(0, -1)},"responseFormatSchema":${schemaText}}`;

describe('log dates PostgreSQL cannot store', () => {
  for (const path of ['/v1/logs', '/v1/logs/overview', '/v1/logs/series']) {
    it.each(OUT_OF_RANGE)(`${path}?since=%s is a 400 naming since`, async (date) => {
      const user = await signUpUser(app);
      await expectBadParam(app, user, `${path}?since=${encodeURIComponent(date)}`, 'since');
    });
    it.each(OUT_OF_RANGE)(`${path}?until=%s is a 400 naming until`, async (date) => {
      const user = await signUpUser(app);
      await expectBadParam(app, user, `${path}?until=${encodeURIComponent(date)}`, 'until');
    });
  }

  it('still accepts the first and the last dates of the range', async () => {
    const user = await signUpUser(app);
    for (const path of ['/v1/logs', '/v1/logs/overview', '/v1/logs/series']) {
      const res = await app.request(
        `${path}?since=1970-01-01T00:00:00Z&until=${encodeURIComponent('9999-12-31T23:59:59.999Z')}`,
        { headers: user.auth },
      );
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
      const early = await app.request(`${path}?until=1970-01-02T00:00:00Z`, { headers: user.auth });
      expect(early.status, `${path}: ${await early.clone().text()}`).toBe(200);
    }
  });
});

describe('forged log cursors', () => {
  it.each(FORGED_LOG_CURSORS)('GET /v1/logs?cursor=%s is a 400 naming cursor', async (cursor) => {
    const user = await signUpUser(app);
    await expectBadParam(app, user, `/v1/logs?cursor=${cursor}`, 'cursor');
  });
});

// Past the field's bound (64) and within the body's (512): the field's own check names it.
describe('a response schema nested 400 deep (200 levels of properties)', () => {
  async function expectSchemaRefused(res: Response) {
    const body = (await res.json()) as {
      error: { code: string; details?: { issues?: { path: string }[] } };
    };
    expect(res.status, JSON.stringify(body).slice(0, 500)).toBe(400);
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.details?.issues?.map((i) => i.path)).toContain('responseFormatSchema');
    const ready = await app.request('/readyz');
    expect(ready.status).toBe(200);
  }

  it('is refused on create, naming responseFormatSchema', async () => {
    const user = await signUpUser(app);
    const res = await app.request('/v1/gates', {
      method: 'POST',
      headers: { ...user.auth, 'content-type': 'application/json' },
      body: withSchema(
        gateInput({ responseFormatEnabled: true, responseFormatType: 'json_schema' }),
        nestedSchemaText(200),
      ),
    });
    await expectSchemaRefused(res);
  });

  it('is refused on update, naming responseFormatSchema', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await app.request(`/v1/gates/${gate.id}`, {
      method: 'PATCH',
      headers: { ...user.auth, 'content-type': 'application/json' },
      body: withSchema({ description: 'deep' }, nestedSchemaText(200)),
    });
    await expectSchemaRefused(res);
  });

  it('is a ValidationError from createGate in GraphQL', async () => {
    const user = await signUpUser(app);
    const query = `mutation($input: GateInput!) {
      createGate(input: $input) { __typename ... on ValidationError { issues { path message } } } }`;
    const res = await app.request('/graphql', {
      method: 'POST',
      headers: { ...user.auth, 'content-type': 'application/json' },
      body: `{"query":${JSON.stringify(query)},"variables":{"input":${withSchema(gateInput({ taskType: 'CHAT' }), nestedSchemaText(200))}}}`,
    });
    const body = (await res.json()) as {
      data?: { createGate: { __typename: string; issues?: { path: string }[] } };
      errors?: unknown[];
    };
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    expect(body.data?.createGate.__typename).toBe('ValidationError');
    expect(body.data?.createGate.issues?.map((i) => i.path)).toContain('responseFormatSchema');
  });
});

describe('GraphQL arguments', () => {
  async function badInput(user: TestUser, query: string, variables: Record<string, unknown>, name: string) {
    const res = await graphql(app, user, query, variables);
    expect(res.data ?? null, JSON.stringify(res)).toBeNull();
    expect(res.errors?.[0]?.extensions?.code, JSON.stringify(res.errors)).toBe('BAD_USER_INPUT');
    expect(res.errors?.[0]?.message).toContain(name);
  }

  const LOGS = `query($since: DateTime, $until: DateTime, $after: String) {
    logs(since: $since, until: $until, after: $after) { edges { cursor } } }`;
  const OVERVIEW = `query($since: DateTime, $until: DateTime) {
    overview(since: $since, until: $until) { totalRequests } }`;
  const SERIES = `query($since: DateTime, $until: DateTime) {
    logSeries(since: $since, until: $until) { bucket } }`;
  const GATES = `query($after: String, $before: String, $last: Int) {
    gates(after: $after, before: $before, last: $last) { edges { cursor node { id } } } }`;

  it.each(['0000-01-01T00:00:00Z', '+275760-09-13T00:00:00Z', '-271821-04-20T00:00:00Z'])(
    'refuses since or until %s on logs, overview and logSeries',
    async (date) => {
      const user = await signUpUser(app);
      for (const query of [LOGS, OVERVIEW, SERIES]) {
        await badInput(user, query, { since: date }, 'since');
        await badInput(user, query, { until: date }, 'until');
      }
    },
  );

  it.each(FORGED_LOG_CURSORS)('refuses the forged log cursor %s', async (after) => {
    const user = await signUpUser(app);
    await badInput(user, LOGS, { after }, 'cursor');
  });

  it.each([
    ['garbage', () => 'not a cursor at all'],
    ['base64 of no cursor', () => Buffer.from('hello').toString('base64')],
    ['a UUID with more after it', () => `${randomUUID()}|0000-01-01`],
    ['an id of no gate', () => randomUUID()],
    ['an old Pothos cursor', (id: string) => Buffer.from(`GPC:S:${id}`).toString('base64')],
  ])('refuses a gates cursor that is %s', async (_name, cursorFor) => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const cursor = cursorFor(gate.id);
    await badInput(user, GATES, { after: cursor }, 'after');
    await badInput(user, GATES, { before: cursor, last: 2 }, 'before');
  });

  it.each([
    [{ first: 201 }, 'first'],
    [{ last: -1 }, 'last'],
    [{ first: 1, last: 1 }, 'last'],
  ])('refuses gates page arguments %o', async (variables, name) => {
    const user = await signUpUser(app);
    const query = `query($first: Int, $last: Int) { gates(first: $first, last: $last) { edges { cursor } } }`;
    await badInput(user, query, variables, name);
  });

  it('pages gates forward and back with its cursors as before', async () => {
    const user = await signUpUser(app);
    const [g1, g2, g3] = [
      await createGate(app, user),
      await createGate(app, user),
      await createGate(app, user),
    ];
    type Page = {
      gates: {
        edges: { cursor: string; node: { id: string } }[];
        pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string };
      };
    };
    const PAGE = `query($first: Int, $after: String, $last: Int, $before: String) {
      gates(first: $first, after: $after, last: $last, before: $before) {
        edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`;
    const ids = (p: Page | undefined) => p?.gates.edges.map((e) => e.node.id);
    const first = (await graphql<Page>(app, user, PAGE, { first: 2 })).data;
    expect(ids(first)).toEqual([g3?.id, g2?.id]);
    expect(first?.gates.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const second = (
      await graphql<Page>(app, user, PAGE, { first: 2, after: first?.gates.pageInfo.endCursor })
    ).data;
    expect(ids(second)).toEqual([g1?.id]);
    expect(second?.gates.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const back = (
      await graphql<Page>(app, user, PAGE, { last: 1, before: second?.gates.pageInfo.startCursor })
    ).data;
    expect(ids(back)).toEqual([g2?.id]);
    expect(back?.gates.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    const start = (
      await graphql<Page>(app, user, PAGE, { last: 2, before: back?.gates.pageInfo.startCursor })
    ).data;
    expect(ids(start)).toEqual([g3?.id]);
    expect(start?.gates.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
  });

  it('refuses another user’s gate as a gates cursor, and pages with its own', async () => {
    const alice = await signUpUser(app);
    const bob = await signUpUser(app);
    const bobs = await createGate(app, bob);
    await badInput(alice, GATES, { after: bobs.id }, 'after');
    const mine = [await createGate(app, alice), await createGate(app, alice)];
    const res = await graphql<{ gates: { edges: { cursor: string; node: { id: string } }[] } }>(
      app,
      alice,
      GATES,
      {},
    );
    const edges = res.data?.gates.edges ?? [];
    expect(edges.map((e) => e.node.id)).toEqual([mine[1]?.id, mine[0]?.id]);
    const next = await graphql<{ gates: { edges: { node: { id: string } }[] } }>(app, alice, GATES, {
      after: edges[0]?.cursor,
    });
    expect(next.errors).toBeUndefined();
    expect(next.data?.gates.edges.map((e) => e.node.id)).toEqual([mine[0]?.id]);
  });
});

describe('bodies and variables nested hundreds and thousands deep', () => {
  /** An array nested `levels` deep, as text (JSON.stringify itself overflows on such a value). */
  const nestedArrayText = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`;

  it.each(['/v3/chat', '/v1/chat/completions'])(
    'are a 400 naming the tool parameters on %s, before anything copies them',
    async (path) => {
      const user = await signUpUser(app);
      const gate = await createGate(app, user);
      const tools = `[{"type":"function","function":{"name":"f","parameters":{"type":"object","x":${nestedArrayText(400)}}}}]`;
      const body =
        path === '/v3/chat'
          ? `{"gateId":"${gate.id}","data":{"messages":[{"role":"user","content":"hi"}],"tools":${tools}}}`
          : `{"model":"${gate.id}","messages":[{"role":"user","content":"hi"}],"tools":${tools}}`;
      const res = await app.request(path, {
        method: 'POST',
        headers: { ...user.auth, 'content-type': 'application/json' },
        body,
      });
      const text = await res.text();
      expect(res.status, text).toBe(400);
      expect(text).toMatch(/tools\.0\.function\.parameters/);
      expect(text).toMatch(/must not nest objects and arrays more than 64 deep/);
    },
  );

  it('is BAD_USER_INPUT for a DateTime variable that is not a string', async () => {
    const user = await signUpUser(app);
    const res = await app.request('/graphql', {
      method: 'POST',
      headers: { ...user.auth, 'content-type': 'application/json' },
      body: `{"query":"query($since: DateTime) { overview(since: $since) { totalRequests } }","variables":{"since":${nestedArrayText(5000)}}}`,
    });
    const body = (await res.json()) as { errors?: { message: string }[] };
    expect(body.errors?.[0]?.message).toMatch(/DateTime must be an ISO-8601 string/);
  });
});

describe('inline media that is not an image', () => {
  it('is a 400 naming the part, since no image allowance bounds what a PDF or audio costs', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await app.request('/v3/chat', {
      method: 'POST',
      headers: user.auth,
      json: {
        gateId: gate.id,
        data: {
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'summarise' },
                { type: 'image_url', image_url: { url: 'data:application/pdf;base64,JVBERi0xLjQK' } },
              ],
            },
          ],
        },
      },
    });
    const text = await res.text();
    expect(res.status, text).toBe(400);
    expect(text).toMatch(/messages\.0\.content\.1\.image_url\.url/);
    expect(text).toMatch(/PNG, JPEG, GIF, WebP or HEIC/);
  });
});
