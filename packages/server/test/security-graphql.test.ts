/**
 * /graphql under attack (issue 9): documents too large or too costly to answer, credentialed
 * CORS for foreign origins, a forged sign-out, and cross-site form posts.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { type DocumentNode, type FragmentDefinitionNode, Kind, parse, print, visit } from 'graphql';
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { chat } from './support/chat.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';

const ALLOWED_ORIGIN = 'https://console.example.test';
const app = useTestApp({ GATEHOUSE_CORS_ORIGINS: ALLOWED_ORIGIN });

type GraphQLBody = {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
};

async function post(
  query: string,
  headers: Record<string, string> = {},
  variables?: Record<string, unknown>,
) {
  const res = await app.request('/graphql', { method: 'POST', headers, json: { query, variables } });
  return { res, body: (await res.json()) as GraphQLBody };
}

/** A refusal in GraphQL's own shape: errors and no data, never a 500. */
function expectRefused(res: Response, body: GraphQLBody, reason: RegExp) {
  expect([200, 400, 413]).toContain(res.status);
  expect(body.data ?? null).toBeNull();
  expect(body.errors?.map((e) => e.message).join('\n')).toMatch(reason);
}

async function expectReady() {
  const ready = await app.request('/readyz');
  expect(ready.status).toBe(200);
}

const aliases = (count: number, selection: string) =>
  `query { ${Array.from({ length: count }, (_, i) => `a${i}: ${selection}`).join(' ')} }`;

describe('GraphQL documents too costly to answer', () => {
  it('refuses 800 aliases of models (the issue’s 7-second, 171 MB answer) and stays ready', async () => {
    const user = await signUpUser(app);
    const selection =
      'models { id provider name taskTypes inputPricePerMTok outputPricePerMTok contextWindow deprecated }';
    const { res, body } = await post(aliases(800, selection), user.auth);
    expectRefused(res, body, /limit/i);
    await expectReady();
  });

  it('refuses more than 15 aliases, naming the limit', async () => {
    const user = await signUpUser(app);
    const { res, body } = await post(aliases(16, 'models { id }'), user.auth);
    expectRefused(res, body, /aliases limit of 15/i);
  });

  it('answers 15 aliases of signupOpen', async () => {
    const { res, body } = await post(aliases(15, 'signupOpen'));
    expect(res.status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(Object.values(body.data ?? {})).toEqual(Array(15).fill(true));
  });

  it('refuses a selection nested deeper than 10 levels', async () => {
    const nested = `${'a { '.repeat(11)}b${' }'.repeat(11)}`;
    const { res, body } = await post(`query { ${nested} }`);
    expectRefused(res, body, /depth limit of 10/i);
  });

  it('refuses a page whose cost passes the limit', async () => {
    const user = await signUpUser(app);
    const { res, body } = await post(
      'query { logs(first: 100000) { edges { node { id gateId costUsd } } } }',
      user.auth,
    );
    expectRefused(res, body, /cost limit/i);
  });

  it('refuses a document of more than 1,000 tokens', async () => {
    const fields = Array.from({ length: 1100 }, () => 'signupOpen').join(' ');
    const { res, body } = await post(`query { ${fields} }`);
    expectRefused(res, body, /token limit of 1000/i);
  });

  it('refuses a query string over 32 KiB before parsing it', async () => {
    const { res, body } = await post(`query { signupOpen } # ${'x'.repeat(33 * 1024)}`);
    expectRefused(res, body, /too large/i);
  });

  it('answers every document the dashboard sends, as urql sends it', async () => {
    const user = await signUpUser(app);
    const documents = dashboardDocuments();
    expect(documents.length).toBeGreaterThan(10);
    for (const [name, query] of documents) {
      const { res, body } = await post(query, user.auth);
      expect(res.status, name).not.toBe(500);
      const refusals = (body.errors ?? []).filter((e) => /limit|too large/i.test(e.message));
      expect(refusals, name).toEqual([]);
    }
  });
});

describe('log entries in lists', () => {
  const PAYLOADS = 'attempts metadata providerRequest providerResponse clientRequest';

  it('bound the rows of an operation when first is a variable (the review’s 315 MB answer)', async () => {
    const user = await signUpUser(app);
    const page = 'logs(first: $n) { edges { node { id toolResults } } }';
    const pages = (count: number) =>
      `query($n: Int) { ${Array.from({ length: count }, (_, i) => `a${i}: ${page}`).join(' ')} }`;
    const { res, body } = await post(pages(15), user.auth, { n: 200 });
    expectRefused(res, body, /at most 500 rows over all its lists/);
    await expectReady();
    const within = await post(pages(2), user.auth, { n: 200 });
    expect(within.body.errors).toBeUndefined();
  });

  it('carry no payloads: each payload field names log(id), which still has them', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    expect((await chat(app, user, gate.id)).status).toBe(200);
    await app.runtime.logs.drain();
    for (const field of PAYLOADS.split(' ')) {
      for (const listed of [
        `query { logs(first: 5) { edges { node { id ${field} } } } }`,
        `query { overview { recentRequests { id ${field} } } }`,
      ]) {
        const { body } = await post(listed, user.auth);
        expect(body.errors?.[0]?.message, listed).toBe(
          `${field} is given by log(id) only, not on a list of entries: ask for the entry by its id`,
        );
      }
    }
    const { body } = await post('query { logs(first: 1) { edges { node { id } } } }', user.auth);
    const [edge] = (body.data as { logs: { edges: { node: { id: string } }[] } }).logs.edges;
    const id = edge?.node.id;
    const one = await post(`query($id: ID!) { log(id: $id) { ${PAYLOADS} } }`, user.auth, { id });
    expect(one.body.errors).toBeUndefined();
    expect(one.body.data?.log).toMatchObject({
      providerRequest: expect.any(Object),
      attempts: expect.any(Array),
    });
  });
});

describe('CORS on /graphql', () => {
  const preflight = (origin: string) =>
    app.request('/graphql', {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-csrf-token',
      },
    });

  const corsHeaders = (res: Response) =>
    [...res.headers.keys()].filter((name) => name.startsWith('access-control-'));

  it('gives a foreign origin no Access-Control-Allow-* header, preflight or not', async () => {
    const user = await signUpUser(app);
    const evil = 'https://evil.example.test';
    expect(corsHeaders(await preflight(evil))).toEqual([]);
    const { res } = await post('query { me { email } }', {
      origin: evil,
      cookie: user.cookie,
      'x-csrf-token': user.csrfToken,
    });
    expect(corsHeaders(res)).toEqual([]);
  });

  it('lets an origin of GATEHOUSE_CORS_ORIGINS in, with credentials', async () => {
    const allowed = await preflight(ALLOWED_ORIGIN);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    expect(allowed.headers.get('access-control-allow-headers')).toMatch(/x-csrf-token/i);
    const { res } = await post('query { signupOpen }', { origin: ALLOWED_ORIGIN });
    expect(res.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
  });
});

describe('GraphQL signOut', () => {
  const signOut = (user: TestUser, headers: Record<string, string>) =>
    app.request('/graphql', {
      method: 'POST',
      headers: { cookie: user.cookie, ...headers },
      json: { query: 'mutation { signOut }' },
    });

  it('refuses a cookie without the x-csrf-token header, as REST does, and the session lives on', async () => {
    const user = await signUpUser(app);
    const res = await signOut(user, {});
    const body = (await res.json()) as GraphQLBody;
    expect(body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(body.data ?? null).toBeNull();
    expect(res.headers.getSetCookie()).toEqual([]);
    expect((await app.request('/v1/gates', { headers: { cookie: user.cookie } })).status).toBe(200);
  });

  it('ends the session when the x-csrf-token header comes with it', async () => {
    const user = await signUpUser(app);
    const res = await signOut(user, { 'x-csrf-token': user.csrfToken });
    expect(await res.json()).toEqual({ data: { signOut: true } });
    expect(res.headers.getSetCookie().find((c) => c.startsWith('gh_session='))).toMatch(/Max-Age=0/i);
    expect((await app.request('/v1/gates', { headers: { cookie: user.cookie } })).status).toBe(401);
  });
});

describe('cross-site form posts to /graphql (login CSRF)', () => {
  it.each([
    ['application/x-www-form-urlencoded', (q: string) => new URLSearchParams({ query: q }).toString()],
    ['text/plain', (q: string) => JSON.stringify({ query: q })],
    [
      'multipart/form-data; boundary=x',
      (q: string) => multipart({ operations: JSON.stringify({ query: q }) }),
    ],
  ])('refuses a %s body without signing anyone in', async (contentType, encode) => {
    const user = await signUpUser(app);
    const mutation = `mutation { signIn(input: { email: "${user.email}", password: "${user.password}" }) { __typename } }`;
    const res = await app.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: encode(mutation),
    });
    expect(res.status).toBe(415);
    const body = (await res.json()) as GraphQLBody;
    expect(body.errors?.[0]?.message).toMatch(/application\/json/);
    expect(res.headers.getSetCookie()).toEqual([]);
  });
});

function multipart(fields: Record<string, string>): string {
  const parts = Object.entries(fields).map(
    ([name, value]) => `--x\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  return `${parts.join('')}--x--\r\n`;
}

/**
 * The dashboard's operations with the fragments each one spreads and the __typename fields urql's
 * cache adds to every selection set: what the browser really sends.
 */
function dashboardDocuments(): [string, string][] {
  const sources: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const file = path.join(dir, name);
      if (statSync(file).isDirectory()) walk(file);
      else if (/\.tsx?$/.test(name) && !name.includes('.test.')) sources.push(readFileSync(file, 'utf8'));
    }
  };
  walk(path.resolve(import.meta.dirname, '../../web/src'));
  const fragments = new Map<string, FragmentDefinitionNode>();
  const operations: DocumentNode[] = [];
  for (const source of sources) {
    for (const match of source.matchAll(/graphql\(\s*`([^`]*)`/g)) {
      for (const definition of parse(match[1] as string).definitions) {
        if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
        else operations.push({ kind: Kind.DOCUMENT, definitions: [definition] });
      }
    }
  }
  return operations.map((operation) => {
    const used = new Map<string, FragmentDefinitionNode>();
    const pending: (DocumentNode | FragmentDefinitionNode)[] = [operation];
    for (let node = pending.pop(); node; node = pending.pop()) {
      visit(node, {
        FragmentSpread(spread) {
          const fragment = fragments.get(spread.name.value);
          if (fragment && !used.has(spread.name.value)) {
            used.set(spread.name.value, fragment);
            pending.push(fragment);
          }
        },
      });
    }
    const document = visit(
      { kind: Kind.DOCUMENT, definitions: [...operation.definitions, ...used.values()] },
      {
        SelectionSet(set) {
          const has = set.selections.some((s) => s.kind === Kind.FIELD && s.name.value === '__typename');
          if (has) return undefined;
          const typename = { kind: Kind.FIELD, name: { kind: Kind.NAME, value: '__typename' } } as const;
          return { ...set, selections: [...set.selections, typename] };
        },
      },
    );
    const name =
      operation.definitions[0]?.kind === Kind.OPERATION_DEFINITION ? operation.definitions[0].name : null;
    return [name?.value ?? randomUUID(), print(document)];
  });
}
