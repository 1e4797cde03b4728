/**
 * Drop-in routes are forward-compatible. Same family, same wire: what Claude Code and Codex CLI
 * send (fields, block types, betas and query the gateway has never seen) reaches a provider of
 * their own family as they sent it, with only the gate's model in it, and its answer comes back
 * as the provider wrote it, plain or streamed, costed and logged from what it reported. Across
 * families the same bodies are translated, what has no meaning there left out and named. And
 * a gate can be named in the model field as `gatehouse/<name or id>`.
 */
import { describe, expect, it } from 'vitest';
import { messageOf, messages, namedEvents } from './support/anthropic.ts';
import { useTestApp } from './support/app.ts';
import { logEntriesOf, say } from './support/chat.ts';
import { CLAUDE_CODE_TOOLS, READ_CALL } from './support/claudeCode.ts';
import { message, streamFrames } from './support/emulators/anthropic.ts';
import { completion, responsesAnswer, responsesFrames, streamReply } from './support/emulators/openai.ts';
import { sseFrame } from './support/emulators/upstream.ts';
import { useEmulators } from './support/emulators/useEmulators.ts';
import { createGate, signUpUser } from './support/factories.ts';

// A newer Anthropic API that knows `future_field`: the gateway must not stand in its way.
const { anthropic, openai, env } = await useEmulators({
  anthropic: { apiKey: 'sk-ant-upstream', fields: ['future_field'] },
  openai: { apiKey: 'sk-openai-upstream' },
});
const app = useTestApp(env);

/** What Claude Code 2.1 sends: a system message mid-conversation, and fields of its own. */
const CLAUDE_CODE_BODY = {
  model: 'claude-opus-5-5',
  max_tokens: 32000,
  system: [{ type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude." }],
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'Read the test.' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Reading it.' }] },
    { role: 'system', content: 'The user switched to plan mode.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Go on.' },
        { type: 'future_block', payload: { x: 1 } },
      ],
    },
  ],
  tools: [...CLAUDE_CODE_TOOLS.slice(0, 3), { type: 'web_search_20250305', name: 'web_search', max_uses: 5 }],
  thinking: { type: 'adaptive' },
  context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
  output_config: { effort: 'high' },
  metadata: { user_id: 'user_5f2d8c1e_account__session_7a1b' },
  future_field: { x: 1 },
};
const CLAUDE_CODE_BETAS = 'claude-code-20250219,context-management-2025-06-27,future-beta-2099-01-01';

/** What Codex CLI 0.169 sends to /v1/responses. */
const CODEX_BODY = {
  model: 'gpt-5.1-codex',
  instructions: 'You are Codex, a coding agent.',
  input: [
    {
      type: 'message',
      role: 'developer',
      content: [{ type: 'input_text', text: '<permissions>workspace-write</permissions>' }],
    },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Fix the sum.' }] },
    { type: 'reasoning', summary: [], encrypted_content: 'gAAAAABo-encrypted' },
    {
      type: 'custom_tool_call',
      call_id: 'call_patch',
      name: 'apply_patch',
      input: '*** Begin Patch\n*** End Patch',
    },
    { type: 'custom_tool_call_output', call_id: 'call_patch', output: 'Done!' },
  ],
  tools: [
    {
      type: 'function',
      name: 'shell',
      description: 'Runs a shell command.',
      strict: false,
      parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } } } },
    },
    {
      type: 'custom',
      name: 'apply_patch',
      description: 'Edits files with a patch.',
      format: { type: 'grammar', syntax: 'lark', definition: 'start: begin_patch hunk+ end_patch' },
    },
    { type: 'web_search' },
    { type: 'tool_search' },
  ],
  tool_choice: 'auto',
  parallel_tool_calls: false,
  reasoning: { effort: 'medium', summary: 'auto' },
  store: false,
  include: ['reasoning.encrypted_content'],
  prompt_cache_key: '0199a1b2-codex-session',
  text: { verbosity: 'medium' },
  client_metadata: { originator: 'codex_exec' },
};

function postResponses(user: { key: string }, headers: Record<string, string>, body: unknown) {
  return app.request('/v1/responses', {
    method: 'POST',
    headers: { authorization: `Bearer ${user.key}`, ...headers },
    json: body,
  });
}

/** The frames of an SSE body, each as its event name and parsed data. */
async function framesOf(res: Response) {
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.text())
    .split('\n\n')
    .filter((f) => f.trim())
    .map((frame) => {
      const lines = frame.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      return { event, data: data === '[DONE]' ? data : JSON.parse(data) };
    });
}

describe('/v1/messages on an Anthropic gate: same family, same wire', () => {
  const gateModel = 'anthropic/claude-sonnet-4-5';

  it('sends the body, betas and query as Claude Code sent them, and answers as Anthropic did', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: gateModel, allowOverrides: { maxTokens: true } });
    const answer = {
      ...message({ usage: { input: 120, output: 30 } }),
      content: [
        { type: 'text', text: 'On it.' },
        { type: 'future_answer_block', detail: 'kept' },
      ],
      context_management: { applied_edits: [] },
    };
    anthropic.upstream.reply({ type: 'json', body: answer });
    const res = await app.request('/v1/messages?beta=true', {
      method: 'POST',
      headers: {
        'x-api-key': user.key,
        'anthropic-version': '2023-06-01',
        'anthropic-beta': CLAUDE_CODE_BETAS,
        'x-gatehouse-gate-id': gate.id,
      },
      json: CLAUDE_CODE_BODY,
    });
    expect(await messageOf(res)).toEqual(answer);
    expect(res.headers.get('x-gatehouse-dropped-fields')).toBeNull();

    const sent = anthropic.upstream.last();
    expect(sent.path).toBe('/v1/messages?beta=true');
    expect(sent.headers['anthropic-beta']).toBe(CLAUDE_CODE_BETAS);
    expect(sent.body).toEqual({ ...CLAUDE_CODE_BODY, model: 'claude-sonnet-4-5' });

    const [entry] = await logEntriesOf(app, gate.id);
    expect(entry).toMatchObject({
      endpoint: '/v1/messages',
      success: true,
      promptTokens: 120,
      completionTokens: 30,
    });
    // claude-sonnet-4-5: $3 in, $15 out per million tokens.
    expect(Number(entry?.costUsd)).toBeCloseTo((120 * 3 + 30 * 15) / 1e6, 10);
    expect(entry?.providerRequest).toEqual(sent.body);
    expect(entry?.providerResponse).toEqual(answer);
  });

  it('streams Anthropic’s events back as they came, unknown ones included, and logs the tool call', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: gateModel, allowOverrides: { maxTokens: true } });
    const frames = streamFrames({
      blocks: [
        { type: 'text', parts: ["I'll read ", 'it.'] },
        { type: 'tool_use', id: READ_CALL.id, name: 'Read', jsonParts: [JSON.stringify(READ_CALL.input)] },
      ],
      usage: { input: 40, output: 12, cacheRead: 1000 },
    });
    const unknown = [
      sseFrame(
        { type: 'content_block_start', index: 2, content_block: { type: 'future_block', a: 1 } },
        'content_block_start',
      ),
      sseFrame(
        { type: 'content_block_delta', index: 2, delta: { type: 'future_delta', b: 2 } },
        'content_block_delta',
      ),
      sseFrame({ type: 'content_block_stop', index: 2 }, 'content_block_stop'),
      sseFrame({ type: 'future_event', c: 3 }, 'future_event'),
    ];
    const all = [...frames.slice(0, -2), ...unknown, ...frames.slice(-2)];
    anthropic.upstream.reply({ type: 'sse', frames: all });
    const res = await app.request('/v1/messages?beta=true', {
      method: 'POST',
      headers: { 'x-api-key': user.key, 'anthropic-beta': CLAUDE_CODE_BETAS, 'x-gatehouse-gate-id': gate.id },
      json: { ...CLAUDE_CODE_BODY, stream: true },
    });
    const events = await namedEvents(res);
    const expected = all.map((f) => JSON.parse(f.split('data: ')[1] as string));
    expect(events.map((e) => e.data)).toEqual(expected);

    expect(anthropic.upstream.last().body).toEqual({
      ...CLAUDE_CODE_BODY,
      stream: true,
      model: 'claude-sonnet-4-5',
    });
    const [entry] = await logEntriesOf(app, gate.id);
    expect(entry).toMatchObject({ success: true, stream: true, promptTokens: 1040, completionTokens: 12 });
    expect(Number(entry?.costUsd)).toBeGreaterThan(0);
    expect(entry?.toolCalls).toEqual([
      {
        id: READ_CALL.id,
        type: 'function',
        function: { name: 'Read', arguments: JSON.stringify(READ_CALL.input) },
      },
    ]);
  });

  it('applies only the gate’s changes: its system prompt first, its output cap, its model', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      model: gateModel,
      systemPrompt: 'Be brief.',
      maxTokens: 2000,
    });
    anthropic.upstream.reply({ type: 'json', body: message({}) });
    const res = await messages(app, user, gate.id, { ...CLAUDE_CODE_BODY, temperature: 0.5 });
    await messageOf(res);
    const { system, max_tokens, temperature: _t, ...rest } = anthropic.upstream.last().body;
    expect(system).toEqual([{ type: 'text', text: 'Be brief.' }, ...CLAUDE_CODE_BODY.system]);
    expect(max_tokens).toBe(2000);
    // The client's temperature is not permitted here and the gate sets none: it is taken out.
    expect(_t).toBeUndefined();
    const { system: _s, max_tokens: _m, ...asSent } = CLAUDE_CODE_BODY;
    expect(rest).toEqual({ ...asSent, model: 'claude-sonnet-4-5' });
    expect(res.headers.get('x-gatehouse-ignored-overrides')).toBe('model,temperature,maxTokens');
  });

  it('checks only what it reads at the door: a 400 naming the field, in Anthropic’s shape', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: gateModel });
    for (const [body, field] of [
      [{ ...CLAUDE_CODE_BODY, messages: 'hi' }, 'messages'],
      [{ ...CLAUDE_CODE_BODY, max_tokens: 'lots' }, 'max_tokens'],
      [{ ...CLAUDE_CODE_BODY, model: 42 }, 'model'],
    ] as const) {
      const res = await messages(app, user, gate.id, body as Record<string, unknown>);
      expect(res.status).toBe(400);
      const error = (await res.json()) as { type: string; error: { type: string; message: string } };
      expect(error.error.type).toBe('invalid_request_error');
      expect(error.error.message).toContain(field);
    }
    expect(anthropic.upstream.requests).toHaveLength(0);
  });
});

describe('/v1/messages on an OpenAI gate: translated, what has no meaning named', () => {
  it('keeps the mid-conversation system message in place, drops and names the rest', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini' });
    openai.upstream.reply({ type: 'json', body: completion('openai', { content: 'Done.' }) });
    const res = await app.request('/v1/messages?beta=true', {
      method: 'POST',
      headers: { 'x-api-key': user.key, 'anthropic-beta': CLAUDE_CODE_BETAS, 'x-gatehouse-gate-id': gate.id },
      json: CLAUDE_CODE_BODY,
    });
    const answer = await messageOf(res);
    expect(answer.content).toEqual([{ type: 'text', text: 'Done.' }]);
    const dropped = res.headers.get('x-gatehouse-dropped-fields')?.split(',');
    expect(dropped?.sort()).toEqual(
      [
        'context_management',
        'output_config',
        'future_field',
        'content.future_block',
        'tools.web_search_20250305',
        // gpt-4o-mini does not reason: thinking has no meaning there.
        'thinking',
      ].sort(),
    );

    const sent = openai.upstream.last();
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers['anthropic-beta']).toBeUndefined();
    expect(sent.body.messages.map((m: { role: string }) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'system',
      'user',
    ]);
    expect(sent.body.messages[3]).toEqual({ role: 'system', content: 'The user switched to plan mode.' });
    expect(sent.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual([
      'Task',
      'Bash',
      'Glob',
    ]);
    const text = JSON.stringify(sent.body);
    for (const word of ['future', 'context_management', 'output_config', 'web_search'])
      expect(text).not.toContain(word);

    const [entry] = await logEntriesOf(app, gate.id);
    expect(entry?.ignoredOverrides).toEqual(
      expect.arrayContaining(dropped?.map((d) => `dropped:${d}`) ?? []),
    );
  });

  it('streams the translation too, naming the drops in the stream’s headers', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini' });
    openai.upstream.reply(streamReply('openai', { content: ['Do', 'ne.'] }));
    const res = await messages(app, user, gate.id, { ...CLAUDE_CODE_BODY, stream: true });
    const events = await namedEvents(res);
    expect(events.at(-1)?.data.type).toBe('message_stop');
    expect(res.headers.get('x-gatehouse-dropped-fields')).toContain('future_field');
  });
});

describe('/v1/responses on an OpenAI gate: Codex’s body as sent', () => {
  const CODEX_ANSWER = {
    output: [
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAAABo-next' },
      { type: 'custom_tool_call', call_id: 'call_2', name: 'apply_patch', input: '*** Begin Patch' },
    ],
    usage: { prompt: 900, completion: 60, cached: 512, reasoning: 40 },
  };

  it('reaches OpenAI’s Responses API unchanged but for the model, and answers as it did', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini' });
    const answer = responsesAnswer(CODEX_ANSWER);
    openai.upstream.reply({ type: 'json', body: answer });
    const res = await postResponses(
      user,
      { 'x-gatehouse-gate-id': gate.id, 'openai-beta': 'responses=v1' },
      CODEX_BODY,
    );
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toEqual(answer);
    const sent = openai.upstream.last();
    expect(sent.path).toBe('/v1/responses');
    expect(sent.headers['openai-beta']).toBe('responses=v1');
    expect(sent.body).toEqual({ ...CODEX_BODY, model: 'gpt-4o-mini' });
    const [entry] = await logEntriesOf(app, gate.id);
    expect(entry).toMatchObject({
      endpoint: '/v1/responses',
      success: true,
      promptTokens: 900,
      completionTokens: 60,
    });
    expect(Number(entry?.costUsd)).toBeGreaterThan(0);
    expect(entry?.toolCalls).toEqual([
      { id: 'call_2', type: 'function', function: { name: 'apply_patch', arguments: '*** Begin Patch' } },
    ]);
  });

  it('streams OpenAI’s events back as they came, unknown ones included', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini' });
    const frames = responsesFrames(CODEX_ANSWER, [{ type: 'response.future_event', detail: 'kept' }]);
    openai.upstream.reply({ type: 'sse', frames });
    const res = await postResponses(
      user,
      { 'x-gatehouse-gate-id': gate.id },
      { ...CODEX_BODY, stream: true },
    );
    const got = await framesOf(res);
    expect(got).toEqual(
      frames.map((f) => ({
        event: f.split('\n')[0]?.slice(7),
        data: JSON.parse(f.split('data: ')[1] as string),
      })),
    );
    expect(openai.upstream.last().body).toEqual({ ...CODEX_BODY, stream: true, model: 'gpt-4o-mini' });
    const [entry] = await logEntriesOf(app, gate.id);
    expect(entry).toMatchObject({ stream: true, promptTokens: 900, completionTokens: 60 });
  });

  it('sends a chat-completions body with fields it does not know to OpenAI unchanged', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini' });
    const body = {
      model: 'gpt-5',
      messages: [{ role: 'developer', content: 'Be exact.' }, ...say('hi')],
      reasoning_effort: 'minimal',
      verbosity: 'low',
      future_field: { x: 1 },
    };
    openai.upstream.reply({ type: 'json', body: completion('openai', { content: 'Hi.' }) });
    const res = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${user.key}`, 'x-gatehouse-gate-id': gate.id },
      json: body,
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(openai.upstream.last().body).toEqual({ ...body, model: 'gpt-4o-mini' });
  });
});

describe('the client’s query string: only what a provider reads goes on', () => {
  it('/v1/messages?beta=true&evil=1 reaches Anthropic as ?beta=true', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'anthropic/claude-sonnet-4-5' });
    anthropic.upstream.reply({ type: 'json', body: message({}) });
    const res = await app.request('/v1/messages?beta=true&evil=1&api_key=sk-other', {
      method: 'POST',
      headers: { 'x-api-key': user.key, 'x-gatehouse-gate-id': gate.id },
      json: CLAUDE_CODE_BODY,
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(anthropic.upstream.last().path).toBe('/v1/messages?beta=true');
  });

  it('/v1/responses?evil=1 reaches OpenAI with no query, and a beta value is encoded', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini' });
    openai.upstream.reply({ type: 'json', body: responsesAnswer({ output: [] }) });
    const res = await app.request('/v1/responses?evil=1', {
      method: 'POST',
      headers: { authorization: `Bearer ${user.key}`, 'x-gatehouse-gate-id': gate.id },
      json: CODEX_BODY,
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(openai.upstream.last().path).toBe('/v1/responses');

    anthropic.upstream.reply({ type: 'json', body: message({}) });
    const anthropicGate = await createGate(app, user, { model: 'anthropic/claude-sonnet-4-5' });
    await app.request('/v1/messages?beta=a%26evil%3D1', {
      method: 'POST',
      headers: { 'x-api-key': user.key, 'x-gatehouse-gate-id': anthropicGate.id },
      json: CLAUDE_CODE_BODY,
    });
    expect(anthropic.upstream.last().path).toBe('/v1/messages?beta=a%26evil%3D1');
  });
});

describe('what a translation leaves out is named within bounds', () => {
  it('a body of 49,990 unknown keys (near the bound on members) names 20 of them and counts the rest, in the header and the log', async () => {
    const user = await signUpUser(app);
    // The mock provider is of another family than chat completions: the body is translated.
    const gate = await createGate(app, user, { model: 'mock/echo' });
    const body: Record<string, unknown> = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] };
    for (let i = 0; i < 49_990; i++) body[`unknown_${i}`] = 1;
    const res = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${user.key}`, 'x-gatehouse-gate-id': gate.id },
      json: body,
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const dropped = res.headers.get('x-gatehouse-dropped-fields')?.split(',');
    expect(dropped).toEqual([...Array.from({ length: 20 }, (_, i) => `unknown_${i}`), '+49970-more']);
    const [entry] = await logEntriesOf(app, gate.id);
    const told = entry?.ignoredOverrides.filter((o) => o.startsWith('dropped:'));
    expect(told).toEqual(dropped?.map((d) => `dropped:${d}`));
  });
});

describe('/v1/responses on an Anthropic gate: Codex’s body translated', () => {
  it('answers, with the custom tool as a function of one string, hosted tools and unknown fields named', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'anthropic/claude-sonnet-4-5' });
    anthropic.upstream.reply({
      type: 'json',
      body: message({ content: [{ type: 'text', text: 'Patched.' }] }),
    });
    const res = await postResponses(user, { 'x-gatehouse-gate-id': gate.id }, CODEX_BODY);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(
      ((await res.json()) as { output: { content: { text: string }[] }[] }).output[0]?.content[0]?.text,
    ).toBe('Patched.');
    expect(res.headers.get('x-gatehouse-dropped-fields')?.split(',').sort()).toEqual(
      [
        // The effort would be a thinking budget, but Anthropic wants the thinking that began a
        // tool loop back, and Codex's conversation is in one.
        'reasoning.effort',
        'reasoning.summary',
        'include',
        'prompt_cache_key',
        'client_metadata',
        'text.verbosity',
        'input.reasoning',
        'tools.web_search',
        'tools.tool_search',
      ].sort(),
    );
    const sent = anthropic.upstream.last().body;
    expect(sent.system).toContain('You are Codex');
    expect(sent.system).toContain('<permissions>workspace-write</permissions>');
    expect(sent.tools.map((t: { name: string }) => t.name)).toEqual(['shell', 'apply_patch']);
    expect(sent.tools[1].input_schema).toMatchObject({
      properties: { input: { type: 'string' } },
      required: ['input'],
    });
    expect(sent.messages.at(-2).content).toEqual([
      {
        type: 'tool_use',
        id: 'call_patch',
        name: 'apply_patch',
        input: { input: '*** Begin Patch\n*** End Patch' },
      },
    ]);
    const text = JSON.stringify(sent);
    for (const word of ['encrypted_content', 'prompt_cache_key', 'web_search', 'verbosity'])
      expect(text).not.toContain(word);
  });
});

describe('the gate named in the model field', () => {
  it('answers `gatehouse/<name>` and `gatehouse/<id>` on each drop-in route without a gate header', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { name: 'claude-code' });
    const byName = await messages(app, user, null, { model: 'gatehouse/claude-code', messages: say('hi') });
    expect((await messageOf(byName)).model).toBe('mock/echo');
    const chat = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${user.key}` },
      json: { model: `gatehouse/${gate.id}`, messages: say('hi') },
    });
    expect(chat.status, await chat.clone().text()).toBe(200);
    const responses = await postResponses(user, {}, { model: 'gatehouse/claude-code', input: 'hi' });
    expect(responses.status, await responses.clone().text()).toBe(200);
    const entries = await logEntriesOf(app, gate.id);
    // One entry a route; entries written in the same instant have no order among themselves.
    expect(entries.map((e) => e.endpoint).sort()).toEqual([
      '/v1/chat/completions',
      '/v1/messages',
      '/v1/responses',
    ]);
    // The model field named the gate: no model override asked for, none ignored.
    expect(byName.headers.get('x-gatehouse-ignored-overrides')).toBe('maxTokens');
    expect(entries[0]?.modelRequested).toBe('mock/echo');
  });

  it('finds only the caller’s gates by name: another account’s is a 404', async () => {
    const owner = await signUpUser(app);
    await createGate(app, owner, { name: 'private-gate' });
    const other = await signUpUser(app);
    const res = await messages(app, other, null, { model: 'gatehouse/private-gate', messages: say('hi') });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('not_found_error');
  });
});

describe('a body as sent through a block limit: held to what the reservation bounds', () => {
  const LIMITED = { spendingLimit: 5, spendingEnforcement: 'block' };

  it('refuses what the bound cannot see (several choices, a stored conversation), naming it, before the provider', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini', ...LIMITED });
    const choices = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${user.key}`, 'x-gatehouse-gate-id': gate.id },
      json: { model: 'x', messages: say('hi'), n: 128, max_tokens: 4096 },
    });
    expect(choices.status).toBe(400);
    expect(await choices.text()).toMatch(/\bn\b/);
    const stored = await postResponses(
      user,
      { 'x-gatehouse-gate-id': gate.id },
      { model: 'x', input: 'hi', previous_response_id: 'resp_1' },
    );
    expect(stored.status).toBe(400);
    expect(await stored.text()).toMatch(/previous_response_id/);
    expect(openai.upstream.requests).toHaveLength(0);
  });

  it('leaves out hosted tools billed per call and a dearer service tier, and names them', async () => {
    const user = await signUpUser(app);
    const limited = await createGate(app, user, { model: 'openai/gpt-4o-mini', ...LIMITED });
    const body = {
      model: 'x',
      input: 'hi',
      service_tier: 'priority',
      tools: [{ type: 'web_search' }, { type: 'function', name: 'f', parameters: { type: 'object' } }],
    };
    openai.upstream.reply({
      type: 'json',
      body: responsesAnswer({ output: [], usage: { prompt: 9, completion: 2 } }),
    });
    const res = await postResponses(user, { 'x-gatehouse-gate-id': limited.id }, body);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-gatehouse-dropped-fields')).toBe('service_tier,tools.web_search');
    const { service_tier: _tier, ...rest } = body;
    // The block limit's output cap goes too (the gate has no maxTokens: the default 4,096).
    expect(openai.upstream.last().body).toEqual({
      ...rest,
      model: 'gpt-4o-mini',
      tools: [body.tools[1]],
      max_output_tokens: 4096,
    });

    // Without a block limit the body goes as sent.
    const open = await createGate(app, user, { model: 'openai/gpt-4o-mini' });
    openai.upstream.reply({
      type: 'json',
      body: responsesAnswer({ output: [], usage: { prompt: 9, completion: 2 } }),
    });
    const unlimited = await postResponses(user, { 'x-gatehouse-gate-id': open.id }, body);
    expect(unlimited.status).toBe(200);
    expect(openai.upstream.last().body).toEqual({ ...body, model: 'gpt-4o-mini' });
  });

  it('bounds a body as sent by what it is written back as, numbers written short included', async () => {
    const user = await signUpUser(app);
    // 3,000 numbers the client writes in 4 characters and JSON.stringify in 21 (1e20): ~15 kB sent,
    // ~66 kB forwarded. gpt-4o-mini reads input at $0.15 a million tokens, at most a token a byte:
    // ~$0.0023 of worst case as the text is long, ~$0.0099 as the provider gets it.
    const gate = await createGate(app, user, {
      model: 'openai/gpt-4o-mini',
      spendingLimit: 0.005,
      spendingEnforcement: 'block',
      maxTokens: 16,
    });
    const post = (pad: string) =>
      app.request('/v1/chat/completions', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${user.key}`,
          'x-gatehouse-gate-id': gate.id,
          'content-type': 'application/json',
        },
        body: `{"model":"x","messages":[{"role":"user","content":"hi"}],"pad":[${Array(3_000).fill(pad).join(',')}]}`,
      });
    const short = await post('1e20');
    expect(short.status, await short.clone().text()).toBe(402);
    expect(openai.upstream.requests).toHaveLength(0);

    // The same count of numbers written as JavaScript writes them in one character fits.
    openai.upstream.reply({ type: 'json', body: completion('openai', { content: 'ok' }) });
    const small = await post('1');
    expect(small.status, await small.clone().text()).toBe(200);
    expect(openai.upstream.last().body.pad).toHaveLength(3_000);
  });

  it('leaves out Anthropic’s server tools on a block gate too', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'anthropic/claude-sonnet-4-5', ...LIMITED });
    anthropic.upstream.reply({ type: 'json', body: message({ usage: { input: 10, output: 3 } }) });
    const res = await messages(app, user, gate.id, {
      model: 'x',
      max_tokens: 100,
      messages: say('hi'),
      tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 5 }, CLAUDE_CODE_TOOLS[0]],
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-gatehouse-dropped-fields')).toBe('tools.web_search_20250305');
    expect(anthropic.upstream.last().body.tools).toEqual([CLAUDE_CODE_TOOLS[0]]);
  });
});
