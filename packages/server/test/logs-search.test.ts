/**
 * Log search (issue 29): the filters beyond gate and status (endpoint, streamed, tool calls,
 * metadata, words), the filtered count and sums, and the export, on REST and GraphQL.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { LogEntryData } from '../src/dataplane/logWriter.ts';
import { EXACT_COUNT_MAX, EXPORT_PAGE } from '../src/domain/logs.ts';
import { useTestApp } from './support/app.ts';
import { answerOf, chat, say } from './support/chat.ts';
import { createGate, graphql, signUpUser, type TestUser } from './support/factories.ts';
import { at, expectBadParam, getLogs, HOUR_MS, insertEntries } from './support/logs.ts';

const app = useTestApp();

type Gate = { id: string; name: string };

/** Entries through the runtime's log writer, each a chat answer unless the spec says otherwise. */
async function write(user: TestUser, gate: Gate, specs: Partial<LogEntryData>[]): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, s] of specs.entries()) {
    const id = randomUUID();
    ids.push(id);
    await app.runtime.logs.add({
      id,
      userId: user.id,
      gateId: gate.id,
      gateName: gate.name,
      endpoint: '/v3/chat',
      modelRequested: 'mock/echo',
      modelUsed: 'mock/echo',
      success: true,
      statusCode: 200,
      promptTokens: 10,
      completionTokens: 5,
      costUsd: 0.001,
      createdAt: at(i * 1000),
      ...s,
    });
  }
  await app.runtime.logs.drain();
  return ids;
}

const ids = async (user: TestUser, query: Record<string, string>) =>
  (await getLogs(app, user, query)).logs.map((l) => l.id);

const prompt = (text: string) => ({ model: 'echo', messages: [{ role: 'user', content: text }] });
const answer = (text: string) => ({ choices: [{ message: { role: 'assistant', content: text } }] });

async function exportOf(user: TestUser, query: string, headers: Record<string, string> = user.auth) {
  return app.request(`/v1/logs/export?${query}`, { headers });
}

describe('filters', () => {
  it('endpoint, streamed, hasToolCalls and metadata find exactly their entries', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const [plain, streamed, tools, tagged, numbered] = await write(user, gate, [
      {},
      { stream: true, endpoint: '/v1/chat/completions' },
      { toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }] },
      { metadata: { team: 'billing', tier: 'gold' } },
      { metadata: { team: 'support', build: 42 } },
    ]);
    const all = [plain, streamed, tools, tagged, numbered].sort();
    expect((await ids(user, { endpoint: '/v1/chat/completions' })).sort()).toEqual([streamed]);
    expect((await ids(user, { endpoint: '/v3/chat' })).sort()).toEqual(
      all.filter((i) => i !== streamed).sort(),
    );
    expect(await ids(user, { streamed: 'true' })).toEqual([streamed]);
    expect(await ids(user, { streamed: 'false' })).not.toContain(streamed);
    expect(await ids(user, { hasToolCalls: 'true' })).toEqual([tools]);
    expect((await ids(user, { hasToolCalls: 'false' })).sort()).toEqual(
      all.filter((i) => i !== tools).sort(),
    );
    expect(await ids(user, { metadataKey: 'team', metadataValue: 'billing' })).toEqual([tagged]);
    expect((await ids(user, { metadataKey: 'team' })).sort()).toEqual([tagged, numbered].sort());
    // A number is compared as its text.
    expect(await ids(user, { metadataKey: 'build', metadataValue: '42' })).toEqual([numbered]);
    expect(await ids(user, { metadataKey: 'team', metadataValue: 'nobody' })).toEqual([]);
    // Filters combine.
    expect(await ids(user, { metadataKey: 'team', streamed: 'true' })).toEqual([]);
  });

  it('q finds an entry by a word of its prompt, its answer or its error, case aside, the owner’s only', async () => {
    const user = await signUpUser(app);
    const other = await signUpUser(app);
    const gate = await createGate(app, user);
    const otherGate = await createGate(app, other);
    const [byPrompt, byAnswer, byError] = await write(user, gate, [
      { providerRequest: prompt('Please translate the Quarterly report into Welsh') },
      { providerRequest: prompt('hello'), providerResponse: answer('The capybara is the largest rodent') },
      {
        success: false,
        statusCode: 502,
        errorCode: 'upstream_error',
        errorMessage: 'Provider answered 503: overloaded zanzibar',
        modelUsed: null,
      },
    ]);
    await write(other, otherGate, [{ providerRequest: prompt('quarterly numbers too') }]);
    expect(await ids(user, { q: 'quarterly' })).toEqual([byPrompt]);
    expect(await ids(user, { q: 'CAPYBARA' })).toEqual([byAnswer]);
    expect(await ids(user, { q: 'zanzibar' })).toEqual([byError]);
    // Web-search syntax: a phrase, a word left out.
    expect(await ids(user, { q: '"largest rodent"' })).toEqual([byAnswer]);
    expect(await ids(user, { q: '"rodent largest"' })).toEqual([]);
    expect(await ids(user, { q: 'quarterly -welsh' })).toEqual([]);
    // Words combine with the other filters.
    expect(await ids(user, { q: 'zanzibar', failureClass: 'provider_error' })).toEqual([byError]);
    expect(await ids(user, { q: 'zanzibar', status: 'success' })).toEqual([]);
    // Punctuation alone is no word: nothing matches, nothing fails.
    expect(await ids(user, { q: '!!!' })).toEqual([]);
    // Either of two words.
    expect((await ids(user, { q: 'capybara or zanzibar' })).sort()).toEqual([byAnswer, byError].sort());
  });

  it('q: words joined by punctuation, quotes, backslashes and other scripts are found as they were written', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const [compound, quoting, scripts] = await write(user, gate, [
      { providerRequest: prompt('Mail ops-team@example.com about order_id 3.14 in the re-run') },
      { providerRequest: prompt("O'Brien said: C:\\Temp\\report isn't 'quoted'") },
      { providerRequest: prompt('東京 café NAÏVE Ünïcode') },
    ]);
    // A word cut in several by its punctuation is found whole, as a phrase of its parts, or by a part.
    expect(await ids(user, { q: 'ops-team@example.com' })).toEqual([compound]);
    expect(await ids(user, { q: 'order_id 3.14' })).toEqual([compound]);
    expect(await ids(user, { q: 'example' })).toEqual([compound]);
    expect(await ids(user, { q: 'team-ops@example.com' })).toEqual([]);
    // Quotes and backslashes in a word or a search break nothing.
    expect(await ids(user, { q: "O'Brien" })).toEqual([quoting]);
    expect(await ids(user, { q: 'C:\\Temp\\report' })).toEqual([quoting]);
    expect(await ids(user, { q: "isn't" })).toEqual([quoting]);
    expect(await ids(user, { q: "'quoted'" })).toEqual([quoting]);
    // Any script; case aside.
    expect(await ids(user, { q: '東京' })).toEqual([scripts]);
    expect(await ids(user, { q: 'CAFÉ naïve ünïcode' })).toEqual([scripts]);
  });

  it('a request through a gate is found by a word of what it asked', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const found = await answerOf(
      await chat(app, user, gate.id, { messages: say('tell me about armadillos') }),
    );
    await answerOf(await chat(app, user, gate.id, { messages: say('tell me about otters') }));
    await app.runtime.logs.drain();
    expect(await ids(user, { q: 'armadillos' })).toEqual([found.id]);
  });

  it('a ~4 MB prompt is logged whole and found by its first words; the index keeps a bounded part', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    // Distinct words: their tsvector would be over 1 MB, which to_tsvector refuses.
    const huge = `wombat ${Array.from({ length: 560_000 }, (_, i) => `w${i.toString(36)}x`).join(' ')} platypus`;
    expect(huge.length).toBeGreaterThan(3_800_000);
    const [id] = await write(user, gate, [{ providerRequest: prompt(huge) }]);
    expect(app.runtime.logs.stats().writeFailures).toEqual({ bad_entry: 0, disk_full: 0, unavailable: 0 });
    const res = await app.request(`/v1/logs/${id}`, { headers: user.auth });
    const entry = (await res.json()) as { provider_request: { messages: { content: string }[] } };
    expect(entry.provider_request.messages[0]?.content).toHaveLength(huge.length);
    expect(await ids(user, { q: 'wombat' })).toEqual([id]);
    // Past the bound (16,000 characters) words are not indexed.
    expect(await ids(user, { q: 'platypus' })).toEqual([]);
  });

  it('GraphQL takes the same filters', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const [, wanted] = await write(user, gate, [
      { providerRequest: prompt('kiwi'), stream: true },
      {
        providerRequest: prompt('kiwi'),
        stream: true,
        metadata: { env: 'prod' },
        toolCalls: [{ id: 'c', name: 'f', arguments: '{}' }],
      },
      { providerRequest: prompt('kiwi'), metadata: { env: 'prod' } },
    ]);
    const res = await graphql<{ logs: { edges: { node: { id: string } }[] } }>(
      app,
      user,
      `query($q: String) { logs(q: $q, streamed: true, hasToolCalls: true, metadataKey: "env", metadataValue: "prod",
         endpoint: "/v3/chat") { edges { node { id } } } }`,
      { q: 'kiwi' },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.logs.edges.map((e) => e.node.id)).toEqual([wanted]);
    const bad = await graphql(app, user, '{ logs(metadataValue: "x") { edges { node { id } } } }');
    expect(bad.errors?.[0]?.message).toContain('metadataValue');
  });

  it('refuses bad values with a 400 naming the parameter', async () => {
    const user = await signUpUser(app);
    await expectBadParam(app, user, '/v1/logs?streamed=yes', 'streamed');
    await expectBadParam(app, user, '/v1/logs?hasToolCalls=1', 'hasToolCalls');
    await expectBadParam(app, user, '/v1/logs?metadataValue=x', 'metadataValue');
    await expectBadParam(app, user, `/v1/logs?q=${'a'.repeat(201)}`, 'q');
    await expectBadParam(app, user, '/v1/logs?q=%20', 'q');
    await expectBadParam(app, user, '/v1/logs/summary?streamed=maybe', 'streamed');
    await expectBadParam(app, user, '/v1/logs/export?format=xlsx', 'format');
    await expectBadParam(app, user, '/v1/logs/export', 'format');
    await expectBadParam(app, user, '/v1/logs/export?format=csv&status=maybe', 'status');
  });
});

describe('GET /v1/logs/summary', () => {
  it('counts the filtered entries and sums their cost and tokens, exactly', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    await write(user, gate, [
      { costUsd: 0.25, promptTokens: 100, completionTokens: 20, providerRequest: prompt('alpha') },
      { costUsd: 0.5, promptTokens: 200, completionTokens: 40, providerRequest: prompt('alpha beta') },
      { costUsd: 1, promptTokens: 1, completionTokens: 1, providerRequest: prompt('gamma') },
    ]);
    const summary = async (query: string) => {
      const res = await app.request(`/v1/logs/summary?${query}`, { headers: user.auth });
      expect(res.status).toBe(200);
      return res.json();
    };
    expect(await summary('q=alpha')).toEqual({
      count: 2,
      estimated: false,
      cost_usd: 0.75,
      prompt_tokens: 300,
      completion_tokens: 60,
      total_tokens: 360,
    });
    expect(await summary('')).toMatchObject({ count: 3, cost_usd: 1.75, total_tokens: 362 });
    expect(await summary('q=nothing')).toEqual({
      count: 0,
      estimated: false,
      cost_usd: 0,
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
    });
    // Another user's entries are not counted.
    const other = await signUpUser(app);
    const res = await app.request('/v1/logs/summary', { headers: other.auth });
    expect(((await res.json()) as { count: number }).count).toBe(0);

    const gql = await graphql<{ logSummary: Record<string, unknown> }>(
      app,
      user,
      '{ logSummary(q: "alpha") { count estimated costUsd promptTokens completionTokens totalTokens } }',
    );
    expect(gql.data?.logSummary).toEqual({
      count: 2,
      estimated: false,
      costUsd: 0.75,
      promptTokens: 300,
      completionTokens: 60,
      totalTokens: 360,
    });
  });

  it(`past ${EXACT_COUNT_MAX.toLocaleString('en')} entries the count is estimated and says so`, async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    await insertEntries(app, user, gate, EXACT_COUNT_MAX + 500, at(0), { spreadMs: 10 });
    await app.db.driver.query('ANALYZE log_entries');
    const res = await app.request('/v1/logs/summary', { headers: user.auth });
    const body = (await res.json()) as { count: number; estimated: boolean; cost_usd: number };
    expect(body.estimated).toBe(true);
    expect(body.count).toBeGreaterThan(EXACT_COUNT_MAX);
    // Every seeded entry cost $0.001: the scaled sum agrees with the estimated count.
    expect(body.cost_usd).toBeCloseTo(body.count * 0.001, 6);
    // Under the threshold, exact again.
    const failed = await app.request('/v1/logs/summary?status=failed', { headers: user.auth });
    expect(await failed.json()).toMatchObject({ count: 0, estimated: false });
  });
});

describe('GET /v1/logs/export', () => {
  /** CSV as rows of cells (RFC 4180), to check the escaping by reading it back. */
  function parseCsv(text: string): string[][] {
    const rows: string[][] = [];
    let row: string[] = [];
    let cell = '';
    let quoted = false;
    for (let i = 0; i < text.length; i++) {
      const ch = text[i] as string;
      if (quoted) {
        if (ch === '"' && text[i + 1] === '"') {
          cell += '"';
          i++;
        } else if (ch === '"') quoted = false;
        else cell += ch;
      } else if (ch === '"') quoted = true;
      else if (ch === ',') {
        row.push(cell);
        cell = '';
      } else if (ch === '\r' && text[i + 1] === '\n') {
        row.push(cell);
        rows.push(row);
        row = [];
        cell = '';
        i++;
      } else cell += ch;
    }
    expect(cell, 'the file ends with a line break').toBe('');
    return rows;
  }

  it('CSV: the filtered entries only, every text cell as written, formulas defused', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const nasty = 'He said "stop", then\nleft, twice\r\n=cmd|calc';
    const [a, b] = await write(user, gate, [
      {
        success: false,
        statusCode: 502,
        errorCode: 'upstream_error',
        errorMessage: nasty,
        providerRequest: prompt('export me'),
      },
      { endUser: '=HYPERLINK("http://x")', metadata: { note: 'a,b' }, providerRequest: prompt('export me') },
      { providerRequest: prompt('not this one') },
    ]);
    const res = await exportOf(user, 'format=csv&q=export');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(
      /^attachment; filename="gatehouse-logs-[\dT-]+\.csv"$/,
    );
    const [head, ...rows] = parseCsv(await res.text());
    expect(rows.map((r) => r[0])).toEqual([b, a]);
    const col = (name: string) => (head as string[]).indexOf(name);
    const rowA = rows[1] as string[];
    const rowB = rows[0] as string[];
    expect(rowA[col('error_message')]).toBe(nasty);
    expect(rowA[col('success')]).toBe('false');
    expect(rowA[col('status_code')]).toBe('502');
    expect(rowB[col('end_user')]).toBe(`'=HYPERLINK("http://x")`);
    expect(rowB[col('metadata')]).toBe('{"note":"a,b"}');
    expect(rowB[col('cost_usd')]).toBe('0.001');
    expect(rows.every((r) => r.length === head?.length)).toBe(true);
  });

  it('JSON Lines: one entry per line, as the list gives it with its metadata', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const [id] = await write(user, gate, [{ metadata: { team: 'x' }, stream: true }, {}]);
    const res = await exportOf(user, 'format=jsonl&streamed=true');
    expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/\.jsonl"$/);
    const text = await res.text();
    expect(text.endsWith('\n')).toBe(true);
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(1);
    const listed = (await getLogs(app, user, { streamed: 'true' })).logs[0];
    expect(lines[0]).toEqual({ ...listed, metadata: { team: 'x' } });
    expect(lines[0].id).toBe(id);
  });

  it('streams page by page, every entry once, newest first', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const total = EXPORT_PAGE * 2 + 37;
    const inserted = await insertEntries(app, user, gate, total, at(HOUR_MS), { spreadMs: 1000 });
    const res = await exportOf(user, 'format=jsonl');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    // The first chunk is the first page alone: the rest is not read before it is sent.
    const first = await reader.read();
    expect(decoder.decode(first.value).trimEnd().split('\n')).toHaveLength(EXPORT_PAGE);
    let text = decoder.decode(first.value);
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      text += decoder.decode(next.value, { stream: true });
    }
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; created_at: string });
    expect(lines).toHaveLength(total);
    expect(new Set(lines.map((l) => l.id))).toEqual(new Set(inserted));
    const times = lines.map((l) => l.created_at);
    expect(times).toEqual([...times].sort().reverse());
  });

  it('works with the dashboard’s session cookie, and shows no one else’s entries', async () => {
    const user = await signUpUser(app);
    const other = await signUpUser(app);
    const gate = await createGate(app, user);
    const [mine] = await write(user, gate, [{}]);
    const byCookie = await exportOf(user, 'format=jsonl', { cookie: user.cookie });
    expect(byCookie.status).toBe(200);
    expect(
      (await byCookie.text())
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual([mine]);
    const theirs = await exportOf(other, 'format=csv');
    expect((await theirs.text()).split('\r\n').filter(Boolean)).toHaveLength(1); // the header only
    expect((await app.request('/v1/logs/export?format=csv')).status).toBe(401);
  });
});
