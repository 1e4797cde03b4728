import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { createGate, gateInput, graphql, signUpUser } from './support/factories.ts';

const app = useTestApp();

const CREATE = `mutation($input: GateInput!) {
  createGate(input: $input) {
    __typename
    ... on MutationCreateGateSuccess { data { id name model taskType temperature spendingStatus } }
    ... on Error { code message }
    ... on ValidationError { issues { path message } }
    ... on ConflictError { field }
    ... on PlanLimitError { limit }
  }
}`;

const UPDATE = `mutation($id: ID!, $input: GateInput!) {
  updateGate(id: $id, input: $input) {
    __typename
    ... on MutationUpdateGateSuccess { data { id name taskType model description temperature } }
    ... on Error { code message }
    ... on ValidationError { issues { path message } }
    ... on ConflictError { field }
  }
}`;

type Result = {
  __typename: string;
  code?: string;
  issues?: { path: string }[];
  field?: string;
  limit?: number;
};

// GraphQL spells choices as enum values (CHAT), REST as the wire values (chat) that gateInput holds.
const graphqlGateInput = (overrides: Record<string, unknown> = {}) =>
  gateInput({ taskType: 'CHAT', ...overrides });

async function create(user: Awaited<ReturnType<typeof signUpUser>>, input: Record<string, unknown>) {
  const res = await graphql<{ createGate: Result & { data?: Record<string, unknown> } }>(app, user, CREATE, {
    input,
  });
  expect(res.errors).toBeUndefined();
  return res.data?.createGate;
}

describe('createGate', () => {
  it('creates a gate that REST then reads the same', async () => {
    const user = await signUpUser(app);
    const input = graphqlGateInput({ temperature: 0.4 });
    const result = await create(user, input);
    expect(result).toMatchObject({
      __typename: 'MutationCreateGateSuccess',
      data: {
        name: input.name,
        model: 'mock/echo',
        taskType: 'CHAT',
        temperature: 0.4,
        spendingStatus: 'ACTIVE',
      },
    });
    const id = String(result?.data?.id);
    const rest = await app.request(`/v1/gates/${id}`, { headers: user.auth });
    expect(await rest.json()).toMatchObject({ id, name: input.name, temperature: 0.4 });
  });

  it.each([
    ['temperature above 2', { temperature: 2.1 }, 'temperature'],
    ['topP above 1', { topP: 1.5 }, 'topP'],
    ['an unknown model', { model: 'nope/nope' }, 'model'],
    ['a fallback of another task type', { fallbackModels: ['mock/embed'] }, 'fallbackModels.0'],
    ['a duplicate fallback', { fallbackModels: ['mock/fast', 'mock/fast'] }, 'fallbackModels.1'],
    [
      'a subtype on an embeddings gate',
      { taskType: 'EMBEDDINGS', model: 'mock/embed', taskSubtype: 'CODE' },
      'taskSubtype',
    ],
    [
      'json_schema output without a schema',
      { responseFormatEnabled: true, responseFormatType: 'JSON_SCHEMA' },
      'responseFormatSchema',
    ],
    ['allowOverrides of the wrong shape', { allowOverrides: { model: 'yes' } }, 'allowOverrides'],
    ['an empty name', { name: '  ' }, 'name'],
    ['a NUL character in the name', { name: 'a\u0000b' }, 'name'],
    [
      'a "__proto__" key in the response format schema',
      { responseFormatSchema: { ['__proto__']: {} } },
      'responseFormatSchema',
    ],
  ])('answers %s with a ValidationError naming the field', async (_label, overrides, path) => {
    const user = await signUpUser(app);
    const result = await create(user, graphqlGateInput(overrides));
    expect(result?.__typename).toBe('ValidationError');
    expect(result?.code).toBe('invalid_request');
    expect(result?.issues?.map((i) => i.path)).toContain(path);
    const rest = await app.request('/v1/gates', { headers: user.auth });
    expect(((await rest.json()) as { gates: unknown[] }).gates).toEqual([]);
  });

  it('refuses an unknown task type as BAD_USER_INPUT naming it, and stores nothing', async () => {
    const user = await signUpUser(app);
    const res = await graphql(app, user, CREATE, { input: graphqlGateInput({ taskType: 'text' }) });
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.errors?.[0]?.message).toContain('taskType');
    const rest = await app.request('/v1/gates', { headers: user.auth });
    expect(((await rest.json()) as { gates: unknown[] }).gates).toEqual([]);
  });

  it('answers a missing required field with a ValidationError on each', async () => {
    const user = await signUpUser(app);
    const result = await create(user, { description: 'no name, model or task type' });
    expect(result?.__typename).toBe('ValidationError');
    expect(result?.issues?.map((i) => i.path).sort()).toEqual(['model', 'name', 'taskType']);
  });

  it('answers a duplicate name with a ConflictError on name', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const result = await create(user, graphqlGateInput({ name: gate.name }));
    expect(result).toMatchObject({ __typename: 'ConflictError', code: 'conflict', field: 'name' });
  });

  it('answers the 11th gate of a free account with a PlanLimitError', async () => {
    const user = await signUpUser(app);
    for (let i = 0; i < 10; i++) await createGate(app, user);
    const result = await create(user, graphqlGateInput());
    expect(result).toMatchObject({ __typename: 'PlanLimitError', code: 'plan_limit_reached', limit: 10 });
    const me = await graphql(app, user, 'query { me { gateCount plan { id maxGates } } }');
    expect(me.data).toEqual({ me: { gateCount: 10, plan: { id: 'free', maxGates: 10 } } });
  });
});

describe('updateGate', () => {
  it('changes only what it is sent, and null clears', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { description: 'old', temperature: 0.3 });
    const res = await graphql<{ updateGate: Result & { data?: Record<string, unknown> } }>(
      app,
      user,
      UPDATE,
      {
        id: gate.id,
        input: { description: null, temperature: 1.5 },
      },
    );
    expect(res.data?.updateGate).toEqual({
      __typename: 'MutationUpdateGateSuccess',
      data: {
        id: gate.id,
        name: gate.name,
        taskType: 'CHAT',
        model: 'mock/echo',
        description: null,
        temperature: 1.5,
      },
    });
  });

  it('re-checks the merged gate: embeddings on a chat model is a ValidationError on model', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await graphql<{ updateGate: Result }>(app, user, UPDATE, {
      id: gate.id,
      input: { taskType: 'EMBEDDINGS' },
    });
    expect(res.data?.updateGate.__typename).toBe('ValidationError');
    expect(res.data?.updateGate.issues?.map((i) => i.path)).toContain('model');
  });

  it('answers a rename onto a taken name with a ConflictError', async () => {
    const user = await signUpUser(app);
    const taken = await createGate(app, user);
    const gate = await createGate(app, user);
    const res = await graphql<{ updateGate: Result }>(app, user, UPDATE, {
      id: gate.id,
      input: { name: taken.name },
    });
    expect(res.data?.updateGate).toMatchObject({ __typename: 'ConflictError', field: 'name' });
  });

  it('answers an unknown id with a NotFoundError', async () => {
    const user = await signUpUser(app);
    const res = await graphql<{ updateGate: Result }>(app, user, UPDATE, {
      id: crypto.randomUUID(),
      input: { temperature: 1 },
    });
    expect(res.data?.updateGate).toMatchObject({ __typename: 'NotFoundError', code: 'not_found' });
  });
});

describe('deleteGate', () => {
  it('deletes the gate and returns its id; a second delete is a NotFoundError', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const DELETE = `mutation($id: ID!) { deleteGate(id: $id) {
      __typename ... on MutationDeleteGateSuccess { data } ... on Error { code } } }`;
    const first = await graphql(app, user, DELETE, { id: gate.id });
    expect(first.data).toEqual({ deleteGate: { __typename: 'MutationDeleteGateSuccess', data: gate.id } });
    expect((await app.request(`/v1/gates/${gate.id}`, { headers: user.auth })).status).toBe(404);
    const second = await graphql(app, user, DELETE, { id: gate.id });
    expect(second.data).toEqual({ deleteGate: { __typename: 'NotFoundError', code: 'not_found' } });
  });
});

describe('the gates connection', () => {
  it('pages through the caller’s gates newest first, filtered by tag and task type', async () => {
    const user = await signUpUser(app);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createGate(app, user, { tags: i % 2 ? ['odd'] : [] })).id);
    const embeddings = await createGate(app, user, { taskType: 'embeddings', model: 'mock/embed' });
    const PAGE = `query($after: String, $tag: String, $taskType: TaskType) {
      gates(first: 2, after: $after, tag: $tag, taskType: $taskType) {
        edges { node { id } } pageInfo { hasNextPage endCursor } } }`;
    type Page = {
      gates: {
        edges: { node: { id: string } }[];
        pageInfo: { hasNextPage: boolean; endCursor: string | null };
      };
    };
    const seen: string[] = [];
    let after: string | null = null;
    for (let n = 0; n < 10; n++) {
      const res: { data?: Page } = await graphql<Page>(app, user, PAGE, { after, taskType: 'CHAT' });
      const page = res.data?.gates;
      seen.push(...(page?.edges.map((e) => e.node.id) ?? []));
      if (!page?.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(new Set(seen).size).toBe(5);
    expect([...seen].sort()).toEqual([...ids].sort());
    const rest = await app.request('/v1/gates?taskType=chat', { headers: user.auth });
    expect(seen).toEqual(((await rest.json()) as { gates: { id: string }[] }).gates.map((g) => g.id));
    const odd = await graphql<Page>(app, user, PAGE, { tag: 'odd' });
    expect(odd.data?.gates.edges.map((e) => e.node.id).sort()).toEqual([ids[1], ids[3]].sort());
    const emb = await graphql<Page>(app, user, PAGE, { taskType: 'EMBEDDINGS' });
    expect(emb.data?.gates.edges.map((e) => e.node.id)).toEqual([embeddings.id]);
  });

  it('refuses an unknown task type filter', async () => {
    const user = await signUpUser(app);
    const query = 'query($taskType: TaskType) { gates(taskType: $taskType) { edges { cursor } } }';
    const res = await graphql(app, user, query, { taskType: 'text' });
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('unauthenticated calls', () => {
  it.each([
    ['gates', 'query { gates { edges { cursor } } }'],
    ['gate', `query { gate(id: "${crypto.randomUUID()}") { id } }`],
    ['apiKeys', 'query { apiKeys { id } }'],
    ['models', 'query { models { id } }'],
    [
      'createGate',
      `mutation { createGate(input: { name: "x", model: "mock/echo", taskType: CHAT }) { __typename } }`,
    ],
  ])('%s answers an error with extensions.code UNAUTHENTICATED', async (_name, query) => {
    const res = await graphql(app, null, query);
    expect(res.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('answers UNAUTHENTICATED for a revoked or unknown key', async () => {
    const res = await app.request('/graphql', {
      method: 'POST',
      headers: { authorization: `Bearer gh_${'x'.repeat(43)}` },
      json: { query: 'query { apiKeys { id } }' },
    });
    const body = (await res.json()) as { errors?: { extensions?: { code?: string } }[] };
    expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('can still ask whether sign-up is open and who is signed in (nobody)', async () => {
    const res = await graphql(app, null, 'query { me { id } plans { id } }');
    expect(res.errors).toBeUndefined();
    expect(res.data).toMatchObject({ me: null });
  });
});

describe('models', () => {
  it('lists only embeddings models for taskType "embeddings"', async () => {
    const user = await signUpUser(app);
    const res = await graphql<{ models: { id: string; taskTypes: string[] }[] }>(
      app,
      user,
      'query { models(taskType: EMBEDDINGS) { id taskTypes } }',
    );
    const models = res.data?.models ?? [];
    expect(models.map((m) => m.id)).toContain('mock/embed');
    expect(models.map((m) => m.id)).not.toContain('mock/echo');
    for (const model of models) expect(model.taskTypes, model.id).toContain('EMBEDDINGS');
    const all = await graphql<{ models: { id: string }[] }>(app, user, 'query { models { id } }');
    expect(all.data?.models.length).toBeGreaterThan(models.length);
  });

  it('offers only models a gate of that task type accepts', async () => {
    const user = await signUpUser(app);
    const res = await graphql<{ models: { id: string }[] }>(
      app,
      user,
      'query { models(taskType: EMBEDDINGS) { id } }',
    );
    const model = res.data?.models.find((m) => m.id !== 'mock/embed')?.id;
    expect(model).toBeDefined();
    await createGate(app, user, { taskType: 'embeddings', model });
  });

  it('gives each model its prices and context, or its price per unit for media', async () => {
    const user = await signUpUser(app);
    type Listed = {
      id: string;
      inputPricePerMTok: number | null;
      contextWindow: number | null;
      unitPrice: { usd: number; per: string } | null;
    };
    const chat = await graphql<{ models: Listed[] }>(
      app,
      user,
      'query { models(taskType: CHAT) { id inputPricePerMTok contextWindow unitPrice { usd per } } }',
    );
    expect(chat.data?.models.find((m) => m.id === 'mock/echo')).toEqual({
      id: 'mock/echo',
      inputPricePerMTok: 1,
      contextWindow: 128_000,
      unitPrice: null,
    });
    const images = await graphql<{ models: Listed[] }>(
      app,
      user,
      'query { models(taskType: IMAGE) { id inputPricePerMTok contextWindow unitPrice { usd per } } }',
    );
    expect(images.data?.models.find((m) => m.id === 'openai/dall-e-2')?.unitPrice).toEqual({
      usd: 0.016,
      per: 'image',
    });
  });

  it('refuses an unknown task type', async () => {
    const user = await signUpUser(app);
    const res = await graphql(
      app,
      user,
      'query($taskType: TaskType) { models(taskType: $taskType) { id } }',
      {
        taskType: 'text',
      },
    );
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('requestWorstCase', () => {
  const QUERY = `query($taskType: TaskType!, $model: String!, $fallbackModels: [String!], $maxTokens: Int, $systemPrompt: String) {
    requestWorstCase(taskType: $taskType, model: $model, fallbackModels: $fallbackModels, maxTokens: $maxTokens, systemPrompt: $systemPrompt)
  }`;

  it('answers what a saved gate with the same settings reports as its requestWorstCaseUsd', async () => {
    const user = await signUpUser(app);
    const settings = {
      model: 'mock/echo',
      fallbackModels: ['openai/gpt-4o'],
      maxTokens: 3000,
      systemPrompt: 'You answer questions about invoices, briefly.',
    };
    const gate = await createGate(app, user, settings);
    const res = await graphql<{ requestWorstCase: number | null }>(app, user, QUERY, {
      taskType: 'CHAT',
      ...settings,
      model: 'mock/echo',
    });
    expect(res.errors).toBeUndefined();
    expect(gate.requestWorstCaseUsd).toBeGreaterThan(0);
    expect(res.data?.requestWorstCase).toBe(gate.requestWorstCaseUsd);
    // The dearest model sets it: without gpt-4o as a fallback it is less; a bigger cap costs more.
    const alone = await graphql<{ requestWorstCase: number }>(app, user, QUERY, {
      taskType: 'CHAT',
      model: 'mock/echo',
      maxTokens: 3000,
      systemPrompt: settings.systemPrompt,
    });
    expect(alone.data?.requestWorstCase).toBeLessThan(gate.requestWorstCaseUsd as number);
    const bigger = await graphql<{ requestWorstCase: number }>(app, user, QUERY, {
      taskType: 'CHAT',
      ...settings,
      maxTokens: 6000,
    });
    expect(bigger.data?.requestWorstCase).toBeGreaterThan(gate.requestWorstCaseUsd as number);
    // Task types priced by their input have none, as their gates have none.
    const image = await graphql<{ requestWorstCase: number | null }>(app, user, QUERY, {
      taskType: 'IMAGE',
      model: 'mock/image',
    });
    expect(image.errors).toBeUndefined();
    expect(image.data?.requestWorstCase).toBeNull();
  });

  it('counts a response format’s schema, as a saved gate with it does', async () => {
    const user = await signUpUser(app);
    const schema = {
      type: 'object',
      properties: { summary: { type: 'string', description: 'One sentence on the invoice, in English.' } },
      required: ['summary'],
    };
    const settings = {
      model: 'mock/echo',
      maxTokens: 16,
      responseFormatEnabled: true,
      responseFormatType: 'json_schema',
      responseFormatSchema: schema,
    };
    const gate = await createGate(app, user, settings);
    const WITH_FORMAT = `query($model: String!, $maxTokens: Int, $enabled: Boolean, $type: ResponseFormatType, $schema: JSON) {
      requestWorstCase(taskType: CHAT, model: $model, maxTokens: $maxTokens, responseFormatEnabled: $enabled,
                       responseFormatType: $type, responseFormatSchema: $schema)
    }`;
    const asked = (vars: Record<string, unknown>) =>
      graphql<{ requestWorstCase: number }>(app, user, WITH_FORMAT, {
        model: 'mock/echo',
        maxTokens: 16,
        ...vars,
      });
    const res = await asked({ enabled: true, type: 'JSON_SCHEMA', schema });
    expect(res.errors).toBeUndefined();
    expect(res.data?.requestWorstCase).toBe(gate.requestWorstCaseUsd);
    // Without the contract, or with it switched off, the schema is not read: less.
    const none = await asked({});
    const off = await asked({ enabled: false, type: 'JSON_SCHEMA', schema });
    expect(none.data?.requestWorstCase).toBeLessThan(gate.requestWorstCaseUsd as number);
    expect(off.data?.requestWorstCase).toBe(none.data?.requestWorstCase);
    // A schema that is not an object is refused naming the field.
    const bad = await asked({ enabled: true, type: 'JSON_SCHEMA', schema: [1, 2] });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(bad.errors?.[0]?.extensions?.issues).toEqual([
      { path: 'responseFormatSchema', message: expect.any(String) },
    ]);
  });

  it('refuses bad settings as BAD_USER_INPUT naming each field, not a server error', async () => {
    const user = await signUpUser(app);
    const res = await graphql(app, user, QUERY, {
      taskType: 'CHAT',
      model: 'no-such/model',
      fallbackModels: ['mock/image'],
      maxTokens: 0,
    });
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.errors?.[0]?.extensions?.issues).toEqual([{ path: 'maxTokens', message: expect.any(String) }]);
    const unknown = await graphql(app, user, QUERY, { taskType: 'CHAT', model: 'no-such/model' });
    expect(unknown.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(unknown.errors?.[0]?.extensions?.issues).toEqual([
      { path: 'model', message: expect.stringContaining('no-such/model') },
    ]);
    const wrongTask = await graphql(app, user, QUERY, {
      taskType: 'CHAT',
      model: 'mock/echo',
      fallbackModels: ['mock/image'],
    });
    expect(wrongTask.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(wrongTask.errors?.[0]?.extensions?.issues).toEqual([
      { path: 'fallbackModels.0', message: expect.stringContaining('does not support task type "chat"') },
    ]);
  });

  it('is for signed-in callers only', async () => {
    const res = await graphql(app, null, QUERY, { taskType: 'CHAT', model: 'mock/echo' });
    expect(res.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(res.data?.requestWorstCase ?? null).toBeNull();
  });
});

describe('providers', () => {
  const configured = useTestApp({ OPENAI_API_KEY: 'sk-test-configured' });

  it('says which providers are configured and names the variable the others need', async () => {
    type Listed = { id: string; name: string; configured: boolean; envVariable: string | null };
    const read = async (on: typeof app) => {
      const user = await signUpUser(on);
      const res = await graphql<{ providers: Listed[] }>(
        on,
        user,
        'query { providers { id name configured envVariable } }',
      );
      return new Map(res.data?.providers.map((p) => [p.id, p]));
    };
    const bare = await read(app);
    expect(bare.get('mock')).toEqual({ id: 'mock', name: 'Mock', configured: true, envVariable: null });
    expect(bare.get('openai')).toMatchObject({ configured: false, envVariable: 'OPENAI_API_KEY' });
    expect(bare.get('anthropic')).toMatchObject({ configured: false, envVariable: 'ANTHROPIC_API_KEY' });
    expect(bare.get('ollama')).toMatchObject({ configured: false, envVariable: 'OLLAMA_BASE_URL' });
    const withKey = await read(configured);
    expect(withKey.get('openai')).toMatchObject({ configured: true, envVariable: 'OPENAI_API_KEY' });
  });

  it('is for signed-in users only', async () => {
    const res = await graphql(app, null, 'query { providers { id } }');
    expect(res.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
