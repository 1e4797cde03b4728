/**
 * GET /openapi.json: a valid OpenAPI 3.1 document (checked by @readme/openapi-parser) that lists
 * every /v1 and /v3 route the app mounts and nothing else, whose drop-in bodies stay open to
 * fields it does not name, and whose schemas hold for what the routes really answer, errors
 * included. GET /docs: the reference page and its files, from this origin only.
 */
import { randomUUID } from 'node:crypto';
import { dereference, validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { OpenAPIV3_1 } from 'openapi-types';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { useTestApp } from './support/app.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

let document: OpenAPIV3_1.Document;
/** The same document with every $ref replaced by what it points at. */
let resolved: OpenAPIV3_1.Document;

beforeAll(async () => {
  const res = await app.request('/openapi.json');
  expect(res.status).toBe(200);
  document = (await res.json()) as OpenAPIV3_1.Document;
  resolved = await dereference(structuredClone(document));
});

type Method = 'get' | 'post' | 'patch' | 'delete' | 'put';

function operation(doc: OpenAPIV3_1.Document, method: string, path: string) {
  return doc.paths?.[path]?.[method.toLowerCase() as Method];
}

const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });

/**
 * The answer's status is one the document gives the route, and a JSON answer holds to the schema
 * the document gives that status. Returns the body.
 */
async function expectDocumented(method: Method, path: string, res: Response): Promise<unknown> {
  const op = operation(resolved, method, path);
  expect(op, `${method.toUpperCase()} ${path} is not in the document`).toBeDefined();
  const response = op?.responses?.[String(res.status)] as OpenAPIV3_1.ResponseObject | undefined;
  const text = await res.text();
  expect(
    response,
    `${method.toUpperCase()} ${path} answered ${res.status}, not documented: ${text}`,
  ).toBeDefined();
  const schema = response?.content?.['application/json']?.schema;
  if (!schema || !res.headers.get('content-type')?.includes('json')) return text;
  const body = JSON.parse(text) as unknown;
  const check = ajv.compile(schema);
  expect(
    check(body),
    `${method.toUpperCase()} ${path} ${res.status}: ${ajv.errorsText(check.errors)}\n${text}`,
  ).toBe(true);
  return body;
}

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(document));
    expect(result.valid, JSON.stringify(result.valid ? [] : result.errors, null, 2)).toBe(true);
  });

  it('describes every /v1 and /v3 route the app mounts, and no other', async () => {
    // The app the suite drives, built again: its route table is what a request can reach.
    const mounted = new Set(
      createApp(app.config, app.runtime)
        .routes.filter((r) => r.method !== 'ALL' && /^\/v[13]\//.test(r.path) && !r.path.includes('*'))
        .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`),
    );
    const described = new Set(
      Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
        Object.keys(item ?? {})
          .filter((key) => ['get', 'post', 'put', 'patch', 'delete'].includes(key))
          .map((method) => `${method} ${path}`),
      ),
    );
    expect(mounted.size).toBeGreaterThan(40);
    expect(
      [...mounted].filter((r) => !described.has(r)),
      'mounted but not described',
    ).toEqual([]);
    expect(
      [...described].filter((r) => !mounted.has(r)),
      'described but not mounted',
    ).toEqual([]);
    for (const route of described) {
      const [method, path] = route.split(' ') as [Method, string];
      const op = operation(document, method, path);
      expect(op?.summary, `${route} has no summary`).toBeTruthy();
      const statuses = Object.keys(op?.responses ?? {});
      expect(
        statuses.some((s) => s.startsWith('4')),
        `${route} documents no error`,
      ).toBe(true);
    }
  });

  it('gives each family of routes its own error shape', () => {
    const errorRef = (method: Method, path: string, status: number) => {
      const response = operation(document, method, path)?.responses?.[status] as OpenAPIV3_1.ResponseObject;
      const schema = response.content?.['application/json']?.schema as
        | OpenAPIV3_1.ReferenceObject
        | undefined;
      return schema?.$ref;
    };
    expect(errorRef('post', '/v1/gates', 400)).toBe('#/components/schemas/NativeError');
    expect(errorRef('post', '/v3/chat', 402)).toBe('#/components/schemas/NativeError');
    expect(errorRef('post', '/v1/chat/completions', 400)).toBe('#/components/schemas/OpenAIError');
    expect(errorRef('post', '/v1/responses', 429)).toBe('#/components/schemas/OpenAIError');
    expect(errorRef('post', '/v1/embeddings', 401)).toBe('#/components/schemas/OpenAIError');
    expect(errorRef('post', '/v1/messages', 529)).toBe('#/components/schemas/AnthropicError');
  });

  it('leaves the drop-in bodies open to fields it does not name, and the native ones as strict as they are', () => {
    const bodySchema = (path: string, media = 'application/json') => {
      const body = operation(resolved, 'post', path)?.requestBody as
        | OpenAPIV3_1.RequestBodyObject
        | undefined;
      return (body?.content[media]?.schema ?? {}) as OpenAPIV3_1.SchemaObject;
    };
    for (const path of [
      '/v1/chat/completions',
      '/v1/responses',
      '/v1/messages',
      '/v1/messages/count_tokens',
      '/v1/embeddings',
      '/v1/moderations',
      '/v1/images/generations',
      '/v1/audio/speech',
    ]) {
      const schema = bodySchema(path);
      expect(schema.properties, path).toHaveProperty('model');
      expect(schema.additionalProperties, path).toEqual({});
      expect(JSON.stringify(schema), path).not.toContain('"additionalProperties":false');
    }
    expect(bodySchema('/v1/audio/transcriptions', 'multipart/form-data').properties).toHaveProperty('file');
    expect(bodySchema('/v1/gates').additionalProperties).toBe(false);
    expect(bodySchema('/v1/gates').required).toEqual(expect.arrayContaining(['name', 'model', 'taskType']));
  });
});

describe('the documented schemas hold for real answers', () => {
  let user: TestUser;
  beforeAll(async () => {
    user = await signUpUser(app);
  });
  const call = (method: Method, path: string, json?: unknown, headers: Record<string, string> = {}) =>
    app.request(path, {
      method: method.toUpperCase(),
      headers: { ...user.auth, ...headers },
      ...(json !== undefined && { json }),
    });

  it('of accounts and API keys', async () => {
    const email = `openapi-${randomUUID()}@example.test`;
    const signup = await app.request('/v1/auth/signup', {
      method: 'POST',
      json: { email, password: `pw-${randomUUID()}` },
    });
    await expectDocumented('post', '/v1/auth/signup', signup);
    await expectDocumented(
      'post',
      '/v1/auth/signin',
      await app.request('/v1/auth/signin', { method: 'POST', json: { email, password: 'wrong-password' } }),
    );
    await expectDocumented('post', '/v1/api-keys', await call('post', '/v1/api-keys', { name: 'docs' }));
    await expectDocumented('get', '/v1/api-keys', await call('get', '/v1/api-keys'));
    await expectDocumented('get', '/v1/admin/accounts', await call('get', '/v1/admin/accounts'));
    await expectDocumented('post', '/v1/api-keys', await call('post', '/v1/api-keys', { name: '' }));
  });

  it('of gates, their history and their errors', async () => {
    const created = await call('post', '/v1/gates', {
      name: `gate-${randomUUID()}`,
      model: 'mock/echo',
      taskType: 'chat',
    });
    const gate = (await expectDocumented('post', '/v1/gates', created)) as { id: string };
    await expectDocumented('get', '/v1/gates', await call('get', '/v1/gates'));
    await expectDocumented('get', '/v1/gates/{id}', await call('get', `/v1/gates/${gate.id}`));
    await expectDocumented(
      'patch',
      '/v1/gates/{id}',
      await call('patch', `/v1/gates/${gate.id}`, { temperature: 0.5, allowOverrides: { model: true } }),
    );
    await expectDocumented(
      'get',
      '/v1/gates/{id}/history',
      await call('get', `/v1/gates/${gate.id}/history`),
    );
    await expectDocumented(
      'post',
      '/v1/gates',
      await call('post', '/v1/gates', { name: 'x', colour: 'red' }),
    );
    await expectDocumented('get', '/v1/gates/{id}', await call('get', `/v1/gates/${randomUUID()}`));
    await expectDocumented('get', '/v1/gates', await app.request('/v1/gates'));
    await expectDocumented('get', '/v1/gates', await call('get', '/v1/gates?limit=0'));
    await expectDocumented('delete', '/v1/gates/{id}', await call('delete', `/v1/gates/${gate.id}`));
  });

  it('of agent gates, their sub-gates and sessions, and the logs they write', async () => {
    const agent = await createGate(app, user, { gateType: 'agent' });
    const helper = await createGate(app, user);
    await expectDocumented(
      'post',
      '/v1/gates/{id}/sub-gates',
      await call('post', `/v1/gates/${agent.id}/sub-gates`, { subGateId: helper.id, role: 'search' }),
    );
    await expectDocumented(
      'get',
      '/v1/gates/{id}/sub-gates',
      await call('get', `/v1/gates/${agent.id}/sub-gates`),
    );
    const session = `docs-${randomUUID()}`;
    const chat = await call(
      'post',
      '/v3/chat',
      { gateId: agent.id, data: { messages: [{ role: 'user', content: 'hello' }] } },
      { 'x-gatehouse-session-id': session },
    );
    await expectDocumented('post', '/v3/chat', chat);
    await expectDocumented(
      'get',
      '/v1/gates/{id}/sessions',
      await call('get', `/v1/gates/${agent.id}/sessions`),
    );
    await expectDocumented('get', '/v1/sessions/{sessionId}', await call('get', `/v1/sessions/${session}`));
    await app.runtime.logs.drain();
    await expectDocumented(
      'get',
      '/v1/sessions/{sessionId}/requests',
      await call('get', `/v1/sessions/${session}/requests`),
    );
    await expectDocumented(
      'post',
      '/v1/sessions/{sessionId}/end',
      await call('post', `/v1/sessions/${session}/end`),
    );
    const logs = (await expectDocumented('get', '/v1/logs', await call('get', '/v1/logs'))) as {
      logs: { id: string }[];
    };
    expect(logs.logs.length).toBeGreaterThan(0);
    await expectDocumented('get', '/v1/logs/{id}', await call('get', `/v1/logs/${logs.logs[0]?.id}`));
    await expectDocumented('get', '/v1/logs/overview', await call('get', '/v1/logs/overview'));
    await expectDocumented('get', '/v1/logs', await call('get', '/v1/logs?status=maybe'));
  });

  it('of the drop-in routes, each answering errors in its own shape', async () => {
    const gate = await createGate(app, user);
    const say = [{ role: 'user', content: 'hello' }];
    await expectDocumented(
      'post',
      '/v1/chat/completions',
      await call('post', '/v1/chat/completions', { messages: say }),
    );
    await expectDocumented(
      'post',
      '/v1/chat/completions',
      await call('post', '/v1/chat/completions', { model: gate.id, messages: say, stream: true }),
    );
    await expectDocumented(
      'post',
      '/v1/responses',
      await call('post', '/v1/responses', { model: randomUUID(), input: 'hello' }),
    );
    await expectDocumented(
      'post',
      '/v1/messages',
      await app.request('/v1/messages', {
        method: 'POST',
        json: { model: gate.id, max_tokens: 10, messages: say },
      }),
    );
    await expectDocumented(
      'post',
      '/v1/messages/count_tokens',
      await call('post', '/v1/messages/count_tokens', { model: gate.id, messages: say }),
    );
    await expectDocumented('get', '/v1/models', await call('get', '/v1/models?taskType=painting'));
    await expectDocumented('post', '/v3/chat', await call('post', '/v3/chat', { gateId: gate.id, data: {} }));
  });
});

describe('GET /docs', () => {
  it('serves the reference and every file it loads from this origin, under a CSP that allows nothing else', async () => {
    const page = await app.request('/docs');
    expect(page.status).toBe(200);
    const html = await page.text();
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(html).not.toMatch(/<script>|<script[^>]*>[^<]/); // no inline script
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    expect(sources.length).toBeGreaterThanOrEqual(3);
    for (const source of sources) {
      expect(source, 'a file from another origin').toMatch(/^\/docs\//);
      const res = await app.request(source);
      expect(res.status, source).toBe(200);
      expect(res.headers.get('content-security-policy'), source).toBe(csp);
    }
    expect((await app.request('/docs/assets/package.json')).status).toBe(404);
    expect((await app.request('/docs/assets/..%2Fpackage.json')).status).toBe(404);
  });
});
