/**
 * Input whose cost grows with its size, bounded before the work starts (issue 24, item 1): each
 * worst case is refused with the error that names the field and the bound, or, where the work is
 * bounded rather than refused (token counts), answered. Costs are never timed here (the bench
 * `pnpm bench:stall` measures them); what is asserted is the refusal, its field and its bound,
 * and for streamed bodies how much of the body was read before the answer.
 */
import {
  JSON_BODY_LIMITS,
  JSON_OBJECT_LIMITS,
  jsonShapeProblem,
  RESPONSE_SCHEMA_LIMITS,
} from '@gatehouse/rules/jsonLimits';
import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { TOKEN_COUNT_LIMITS } from '../src/dataplane/cost.ts';
import { MULTIPART_LIMITS } from '../src/http/multipart.ts';
import { useTestApp } from './support/app.ts';
import { chat, completions, type NativeError, type OpenAIError, say } from './support/chat.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

type Issue = { path: string; message: string };
const issuesOf = (body: NativeError) => (body.error.details?.issues ?? []) as Issue[];

/** An object schema of `count` string properties: 3 members each, and 4 more around them. */
function schemaOf(count: number) {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) properties[`field_${i}`] = { type: 'string' };
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}
/** The smallest such schema past RESPONSE_SCHEMA_LIMITS.maxMembers: small in bytes (~20 KB). */
const overMembers = schemaOf(Math.ceil((RESPONSE_SCHEMA_LIMITS.maxMembers - 3) / 3));
/** The largest within it. */
const atMembers = schemaOf(Math.floor((RESPONSE_SCHEMA_LIMITS.maxMembers - 4) / 3));

const keys = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]));

const jsonSchemaFormat = (schema: unknown) => ({
  type: 'json_schema',
  json_schema: { name: 'answer', schema },
});

async function expectRefused(res: Response, status: number, path: RegExp | string, bound: RegExp) {
  const body = (await res.json()) as NativeError;
  expect(res.status, JSON.stringify(body).slice(0, 400)).toBe(status);
  const issue = issuesOf(body).find((i) => (typeof path === 'string' ? i.path === path : path.test(i.path)));
  expect(issue, JSON.stringify(body).slice(0, 400)).toBeDefined();
  expect(issue?.message).toMatch(bound);
}

describe('response schemas: members bounded before anything compiles them', () => {
  const bound = new RegExp(`at most ${RESPONSE_SCHEMA_LIMITS.maxMembers} members`);

  it('refuses a gate schema past the bound on create and update, however few its bytes', async () => {
    expect(JSON.stringify(overMembers).length).toBeLessThan(RESPONSE_SCHEMA_LIMITS.maxBytes / 2);
    expect(jsonShapeProblem(atMembers, RESPONSE_SCHEMA_LIMITS)).toBeNull();
    const user = await signUpUser(app);
    const schemaGate = (schema: unknown) => ({
      responseFormatEnabled: true,
      responseFormatType: 'json_schema',
      responseFormatSchema: schema,
    });
    const created = await app.request('/v1/gates', {
      method: 'POST',
      headers: user.auth,
      json: { name: 'too-many-members', model: 'mock/echo', taskType: 'chat', ...schemaGate(overMembers) },
    });
    await expectRefused(created, 400, 'responseFormatSchema', bound);
    const gate = await createGate(app, user);
    const patched = await app.request(`/v1/gates/${gate.id}`, {
      method: 'PATCH',
      headers: user.auth,
      json: schemaGate(overMembers),
    });
    await expectRefused(patched, 400, 'responseFormatSchema', bound);
    // The largest within the bound is a schema like any other.
    const within = await app.request(`/v1/gates/${gate.id}`, {
      method: 'PATCH',
      headers: user.auth,
      json: schemaGate(atMembers),
    });
    expect(within.status, (await within.clone().text()).slice(0, 300)).toBe(200);
  });

  it('refuses a per-request schema past the bound on /v3/chat and /v1/chat/completions', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const native = await chat(app, user, gate.id, { responseFormat: jsonSchemaFormat(overMembers) });
    await expectRefused(native, 400, /^responseFormat/, bound);
    const openAI = await completions(app, user, gate.id, { response_format: jsonSchemaFormat(overMembers) });
    const body = (await openAI.json()) as OpenAIError;
    expect(openAI.status).toBe(400);
    expect(body.error.message).toMatch(bound);
  });
});

describe('free-form objects: keys counted before they are parsed', () => {
  it(`refuses metadata of more than ${JSON_OBJECT_LIMITS.maxMetadataKeys} keys, naming metadata`, async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const over = keys(JSON_OBJECT_LIMITS.maxMetadataKeys + 1);
    const bound = new RegExp(`at most ${JSON_OBJECT_LIMITS.maxMetadataKeys} keys`);
    await expectRefused(await chat(app, user, gate.id, {}, { metadata: over }), 400, 'metadata', bound);
    const openAI = await completions(app, user, gate.id, { metadata: over });
    expect(openAI.status).toBe(400);
    expect(((await openAI.json()) as OpenAIError).error.message).toMatch(bound);
    const within = await chat(app, user, gate.id, {}, { metadata: keys(JSON_OBJECT_LIMITS.maxMetadataKeys) });
    expect(within.status, await within.clone().text()).toBe(200);
  });

  it(`refuses a tool schema of more than ${JSON_OBJECT_LIMITS.maxMembers} members, naming it`, async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const parameters = { type: 'object', properties: keys(JSON_OBJECT_LIMITS.maxMembers) };
    const tools = [{ type: 'function', function: { name: 'wide', parameters } }];
    await expectRefused(
      await chat(app, user, gate.id, { tools }),
      400,
      'data.tools.0.function.parameters',
      new RegExp(`at most ${JSON_OBJECT_LIMITS.maxMembers} members`),
    );
  });

  it(`refuses a JSON body of more than ${JSON_BODY_LIMITS.maxMembers} members before parsing it`, async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    // Members the routes would otherwise ignore (an unknown field): only the count refuses them.
    const filler = Array.from({ length: JSON_BODY_LIMITS.maxMembers }, () => 0);
    const res = await completions(app, user, gate.id, { unknown_field: filler });
    expect(res.status).toBe(400);
    expect(((await res.json()) as OpenAIError).error.message).toMatch(
      new RegExp(`at most ${JSON_BODY_LIMITS.maxMembers} JSON members`),
    );
    const native = await chat(app, user, gate.id, {}, { unknown_field: filler });
    await expectRefused(native, 400, '', new RegExp(`at most ${JSON_BODY_LIMITS.maxMembers} JSON members`));
  });

  // JSON.parse builds what JSON.stringify cannot write back (its stack overflows past ~4,000
  // levels), and a drop-in body is forwarded, costed and logged whole: a field the gateway does
  // not read, nested 20,000 deep, made a 502 "failed inside the gateway".
  it(`refuses a JSON body nested more than ${JSON_BODY_LIMITS.maxDepth} deep, naming where, on every route`, async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const deep = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;
    const routes: [string, string][] = [
      [
        '/v1/chat/completions',
        `{"model":"gatehouse/${gate.id}","messages":[{"role":"user","content":"hi"}],"future":${deep}}`,
      ],
      ['/v1/responses', `{"model":"gatehouse/${gate.id}","input":"hi","future":${deep}}`],
      [
        '/v1/messages',
        `{"model":"gatehouse/${gate.id}","max_tokens":9,"messages":[{"role":"user","content":"hi"}],"future":${deep}}`,
      ],
      [
        '/v3/chat',
        `{"gateId":"${gate.id}","data":{"messages":[{"role":"user","content":"hi"}]},"future":${deep}}`,
      ],
    ];
    for (const [path, body] of routes) {
      const res = await app.request(path, {
        method: 'POST',
        headers: { ...user.auth, 'content-type': 'application/json' },
        body,
      });
      const text = await res.text();
      expect(res.status, `${path}: ${text.slice(0, 300)}`).toBe(400);
      expect(text, path).toMatch(new RegExp(`future\\.a\\.a.*more than ${JSON_BODY_LIMITS.maxDepth} deep`));
    }
    expect((await app.request('/readyz')).status).toBe(200);
  });
});

/** A multipart body, as a stream that counts the parts it has handed over. */
function streamedForm(parts: Iterable<string>, boundary: string) {
  const encoder = new TextEncoder();
  const counted = { parts: 0, bytes: 0 };
  const source = parts[Symbol.iterator]();
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = source.next();
      if (next.done) {
        controller.enqueue(encoder.encode(`--${boundary}--\r\n`));
        controller.close();
        return;
      }
      counted.parts++;
      const bytes = encoder.encode(next.value);
      counted.bytes += bytes.length;
      controller.enqueue(bytes);
    },
  });
  return { body, counted };
}

function* fields(boundary: string, gateId: string, count: number) {
  yield `--${boundary}\r\nContent-Disposition: form-data; name="gateId"\r\n\r\n${gateId}\r\n`;
  for (let i = 0; i < count; i++) {
    yield `--${boundary}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nx\r\n`;
  }
}

function sendForm(user: TestUser, path: string, body: ReadableStream<Uint8Array> | string, boundary: string) {
  return app.request(path, {
    method: 'POST',
    headers: { ...user.auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
    duplex: 'half',
  } as RequestInit);
}

describe('multipart bodies: parts counted as they arrive', () => {
  const { maxParts, maxFiles, maxFieldBytes } = MULTIPART_LIMITS;
  const partsBound = new RegExp(`at most ${maxParts} parts`);

  it('refuses a body of 100,000 fields on /v3/stt once the limit is passed, without reading the rest', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { taskType: 'stt', model: 'mock/stt' });
    const boundary = 'stall-boundary';
    const { body, counted } = streamedForm(fields(boundary, gate.id, 100_000), boundary);
    const res = await sendForm(user, '/v3/stt', body, boundary);
    expect(res.headers.get('connection')).toBe('close');
    await expectRefused(res, 400, '', partsBound);
    // Refused as it streamed: far fewer parts were ever pulled than were on offer.
    expect(counted.parts).toBeLessThan(10 * maxParts);
  });

  it('refuses it on /v1/audio/transcriptions too, in OpenAI error shape', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { taskType: 'stt', model: 'mock/stt' });
    const boundary = 'stall-boundary';
    const { body, counted } = streamedForm(fields(boundary, gate.id, 100_000), boundary);
    const res = await sendForm(user, '/v1/audio/transcriptions', body, boundary);
    expect(res.status).toBe(400);
    expect(((await res.json()) as OpenAIError).error.message).toMatch(partsBound);
    expect(counted.parts).toBeLessThan(10 * maxParts);
  });

  it('refuses a second file and a field past its size, naming the bound and the field', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { taskType: 'stt', model: 'mock/stt' });
    const boundary = 'stall-boundary';
    const file = (name: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF\r\n`;
    const twoFiles = `--${boundary}\r\nContent-Disposition: form-data; name="gateId"\r\n\r\n${gate.id}\r\n${file('file')}${file('other')}--${boundary}--\r\n`;
    await expectRefused(
      await sendForm(user, '/v3/stt', twoFiles, boundary),
      400,
      '',
      new RegExp(`at most ${maxFiles} file`),
    );
    const longField = `--${boundary}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\n${'p'.repeat(maxFieldBytes + 1)}\r\n--${boundary}--\r\n`;
    await expectRefused(
      await sendForm(user, '/v3/stt', longField, boundary),
      400,
      'prompt',
      new RegExp(`at most ${maxFieldBytes} bytes`),
    );
  });
});

describe('token counts of large texts: exact up to a bound, estimated past it', () => {
  it('answers count_tokens for a 200,000-letter word (BPE is quadratic in a word) and prose past the bound', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const count = async (text: string) => {
      const res = await app.request('/v1/messages/count_tokens', {
        method: 'POST',
        headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
        json: { model: gate.id, messages: say(text) },
      });
      expect(res.status, (await res.clone().text()).slice(0, 300)).toBe(200);
      return ((await res.json()) as { input_tokens: number }).input_tokens;
    };
    // Exact tokenization of this takes minutes: only its bounded prefix is counted.
    expect(await count('a'.repeat(200_000))).toBeGreaterThan(0);
    // Prose ten times the exact bound: the estimate stays within 1% of the exact count.
    const prose = 'The quick brown fox jumps over the lazy dog; naïve café, 1234. '.repeat(
      Math.ceil((10 * TOKEN_COUNT_LIMITS.exactChars) / 64),
    );
    const exact = countTokens(prose, { disallowedSpecial: new Set() });
    expect(Math.abs((await count(prose)) - exact) / exact).toBeLessThan(0.01);
  });
});

describe('bodies over the size limit: refused without being read whole', () => {
  it('refuses a chat body with no Content-Length once it passes the limit, and closes the connection', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const limit = app.config.maxChatBodyBytes;
    const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
    let pulled = 0;
    // Endless: a server that read a body whole before checking its size would never answer.
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"messages":[],"padding":"'));
      },
      pull(controller) {
        pulled += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const res = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { ...user.auth, 'content-type': 'application/json', 'x-gatehouse-gate-id': gate.id },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(pulled).toBeLessThan(limit + 10 * chunk.length);
    // Nor after the answer: the connection closes rather than waiting on, or draining, the rest.
    expect(res.headers.get('connection')).toBe('close');
  });

  it('refuses a control-plane body over its limit by Content-Length, and closes the connection', async () => {
    const user = await signUpUser(app);
    const res = await app.request('/v1/gates', {
      method: 'POST',
      headers: { ...user.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as NativeError).error.code).toBe('payload_too_large');
    expect(res.headers.get('connection')).toBe('close');
  });
});
