/**
 * Every answered request has its log entry, whatever text it carried: PostgreSQL refuses NUL
 * and unpaired surrogates in jsonb and text, so the stored copy has U+FFFD in their place (the
 * client's answer is untouched), an entry whose payload cannot be written out as JSON at all is
 * stored without it, and an entry the database still refuses is counted, not lost without a word.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createLogWriter, type LogEntryData } from '../src/dataplane/logWriter.ts';
import { useTestApp } from './support/app.ts';
import { answerOf, chat, completions, logEntriesOf, say } from './support/chat.ts';
import { createGate, signUpUser } from './support/factories.ts';
import { entryMaker } from './support/logs.ts';

const app = useTestApp();

// A NUL, a lone high surrogate, a lone low surrogate, and a well-formed pair (kept as it is).
const AWKWARD = 'a\u0000b\ud800c\udc00d 😀 and a literal \\u0000 typed by the user';

describe('text PostgreSQL cannot store', () => {
  it('is answered and logged, with U+FFFD in the stored copy, on /v3/chat and /v1/chat/completions', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/echo' });

    const answer = await answerOf(
      await chat(app, user, gate.id, { messages: say(AWKWARD) }, { metadata: { note: AWKWARD } }),
    );
    expect(answer.content).toBe(`Echo: ${AWKWARD}`);
    const compat = await completions(app, user, gate.id, { messages: say(AWKWARD), stream: true });
    expect(compat.status).toBe(200);
    expect(await compat.text()).toContain('[DONE]');

    const entries = await logEntriesOf(app, gate.id);
    expect(entries).toHaveLength(2);
    const stored = JSON.stringify(entries.map((e) => [e.providerRequest, e.providerResponse, e.metadata]));
    expect(stored).toContain('a\ufffdb\ufffdc\ufffdd 😀');
    expect(stored).toContain('literal \\\\u0000 typed');
    // No escape of a NUL or lone surrogate is left (an escaped backslash before "u" is text).
    expect(stored).not.toMatch(/(?<!\\)\\u(0000|d800|dc00)/);

    // The hourly totals count both requests too.
    const overview = await app.request('/v1/logs/overview', { headers: user.auth });
    expect(((await overview.json()) as { totalRequests: number }).totalRequests).toBe(2);
  });

  it('keeps error messages and tool results that carry such text', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/echo' });
    const res = await chat(app, user, gate.id, {
      messages: [
        { role: 'user', content: 'use the tool' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: `result \u0000 \ud83d` },
        { role: 'user', content: '[mock:fail=400] again' },
      ],
    });
    expect(res.status).toBe(400);
    const [entry] = await logEntriesOf(app, gate.id);
    expect(entry?.success).toBe(false);
    expect(JSON.stringify(entry?.toolResults)).toContain('result \ufffd \ufffd');
  });
});

describe('an entry the database refuses all the same', () => {
  it('is retried alone, then counted in the metrics', async () => {
    const entry = await entryMaker(app);
    const writer = createLogWriter({ intervalMs: 20 });
    const good = randomUUID();
    await writer.add(entry(good));
    // Not a UUID: the database refuses this row whatever is done to its text.
    await writer.add({ ...entry(randomUUID()), userId: 'not-a-user-id' });
    await writer.close();
    expect(writer.stats()).toMatchObject({ written: 1, refused: 1 });
    expect(await app.db.prisma.logEntry.count({ where: { id: good } })).toBe(1);
  });

  it('shows on GET /metrics as gatehouse_log_entries_refused_total', async () => {
    const res = await app.request('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/^gatehouse_log_entries_written_total \d+$/m);
    expect(text).toMatch(/^gatehouse_log_entries_refused_total 0$/m);
    expect(text).toMatch(/^gatehouse_log_entries_sanitized_total \d+$/m);
  });
});

describe('an entry whose payload cannot be encoded', () => {
  /** A counter's value on GET /metrics. */
  async function metric(name: string): Promise<number> {
    const text = await (await app.request('/metrics')).text();
    const value = new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1];
    expect(value, `${name} in ${text}`).toBeDefined();
    return Number(value);
  }

  it('is stored with its cost, tokens and status and a note in place of the payload, and counted', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const circular: Record<string, unknown> = { note: 'a client object' };
    circular.self = circular;
    const id = randomUUID();
    const entry: LogEntryData = {
      id,
      userId: user.id,
      gateId: gate.id,
      gateName: gate.name,
      endpoint: '/v3/chat',
      modelUsed: 'mock/echo',
      success: true,
      statusCode: 200,
      costUsd: 0.0123,
      promptTokens: 11,
      completionTokens: 22,
      metadata: circular as never,
      providerRequest: { model: 'mock/echo' },
      providerResponse: { content: 'hello' },
      toolCalls: [{ id: 'c1' }],
    };
    const dropped = await metric('gatehouse_log_entries_payload_dropped_total');
    const refused = await metric('gatehouse_log_entries_refused_total');

    await app.runtime.logs.add(entry);
    await app.runtime.logs.drain();

    const stored = await app.db.prisma.logEntry.findUnique({ where: { id } });
    expect(stored).toMatchObject({
      success: true,
      statusCode: 200,
      promptTokens: 11,
      completionTokens: 22,
      modelUsed: 'mock/echo',
      providerResponse: { gatehouse: 'payload not stored: Converting circular structure to JSON' },
      providerRequest: null,
      metadata: null,
      toolCalls: null,
    });
    expect(Number(stored?.costUsd)).toBe(0.0123);
    expect(await metric('gatehouse_log_entries_payload_dropped_total')).toBe(dropped + 1);
    expect(await metric('gatehouse_log_entries_refused_total')).toBe(refused);
    // The hourly totals have its cost too.
    const overview = await app.request(`/v1/logs/overview?gateId=${gate.id}`, { headers: user.auth });
    expect(await overview.json()).toMatchObject({ totalRequests: 1, totalCostUsd: 0.0123 });
  });
});
