/**
 * Across families, what has a meaning is translated both ways. A custom (free-form) tool goes to
 * Anthropic as a function of one string, `input`, and the model's call of it comes back to the
 * client as a custom tool call with that text (Codex's apply_patch on an Anthropic model), plain
 * or streamed, on /v1/responses and /v1/chat/completions. A reasoning effort becomes a thinking
 * budget on Anthropic, and a thinking budget an effort on OpenAI's reasoning models; where the
 * model takes neither, the setting is left out and named.
 */
import { describe, expect, it } from 'vitest';
import { messages } from './support/anthropic.ts';
import { useTestApp } from './support/app.ts';
import { logEntriesOf, say } from './support/chat.ts';
import { message, streamFrames } from './support/emulators/anthropic.ts';
import { completion } from './support/emulators/openai.ts';
import { useEmulators } from './support/emulators/useEmulators.ts';
import { createGate, graphql, signUpUser } from './support/factories.ts';

const { anthropic, openai, env } = await useEmulators({
  anthropic: { apiKey: 'sk-ant-upstream' },
  openai: { apiKey: 'sk-openai-upstream' },
});
const app = useTestApp(env);

const PATCH =
  '*** Begin Patch\n*** Update File: sum.py\n@@\n-    return a - b\n+    return a + b\n*** End Patch';
const APPLY_PATCH = {
  type: 'custom',
  name: 'apply_patch',
  description: 'Edits files with a patch.',
  format: { type: 'grammar', syntax: 'lark', definition: 'start: begin_patch hunk+ end_patch' },
};

/** What Codex CLI sends to /v1/responses for a first turn: its tools, reasoning and fields of its own. */
const CODEX_BODY = {
  model: 'gpt-5.1-codex',
  instructions: 'You are Codex, a coding agent.',
  input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Fix the sum.' }] }],
  tools: [
    {
      type: 'function',
      name: 'shell',
      description: 'Runs a shell command.',
      parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } } } },
    },
    APPLY_PATCH,
    { type: 'web_search' },
  ],
  tool_choice: 'auto',
  parallel_tool_calls: false,
  reasoning: { effort: 'medium', summary: 'auto' },
  store: false,
  include: ['reasoning.encrypted_content'],
};

const PATCH_CALL = { id: 'toolu_01Patch', name: 'apply_patch', input: { input: PATCH } };

function post(path: string, user: { key: string }, gateId: string, body: unknown) {
  return app.request(path, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.key}`, 'x-gatehouse-gate-id': gateId },
    json: body,
  });
}

type Frame = { type: string } & Record<string, unknown>;

/** The data of each SSE frame, parsed (OpenAI's `[DONE]` left out). */
async function framesOf(res: Response): Promise<Frame[]> {
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.text())
    .split('\n\n')
    .map((f) =>
      f
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n'),
    )
    .filter((data) => data && data !== '[DONE]')
    .map((data) => JSON.parse(data) as Frame);
}

/** The tool_use's arguments cut into pieces that split the JSON mid-key, mid-escape and mid-string. */
const PATCH_JSON = JSON.stringify(PATCH_CALL.input);
const ESCAPE = PATCH_JSON.indexOf('\\');
const PATCH_PARTS = [
  PATCH_JSON.slice(0, 4),
  PATCH_JSON.slice(4, ESCAPE + 1),
  PATCH_JSON.slice(ESCAPE + 1, 40),
  PATCH_JSON.slice(40),
];

describe('a custom tool on an Anthropic gate: its call comes back as a custom tool call', () => {
  const gateModel = 'anthropic/claude-sonnet-4-5';

  it('/v1/responses: a custom_tool_call item with the patch as its input', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: gateModel });
    anthropic.upstream.reply({
      type: 'json',
      body: message({ content: [{ type: 'tool_use', ...PATCH_CALL }] }),
    });
    const res = await post('/v1/responses', user, gate.id, CODEX_BODY);
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { output: Record<string, unknown>[]; tools: { type: string }[] };
    expect(body.output).toEqual([
      {
        id: expect.stringMatching(/^ctc_/),
        type: 'custom_tool_call',
        status: 'completed',
        call_id: PATCH_CALL.id,
        name: 'apply_patch',
        input: PATCH,
      },
    ]);
    expect(body.tools.map((t) => t.type)).toEqual(['function', 'custom']);
    // Anthropic was offered a function of one string for it.
    const sent = anthropic.upstream.last().body;
    expect(sent.tools[1]).toMatchObject({ name: 'apply_patch', input_schema: { required: ['input'] } });
  });

  it('/v1/responses streamed: the custom tool call’s events, its input decoded as it arrives', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: gateModel });
    anthropic.upstream.reply({
      type: 'sse',
      frames: streamFrames({
        blocks: [
          { type: 'text', parts: ['Patching.'] },
          { type: 'tool_use', id: PATCH_CALL.id, name: 'apply_patch', jsonParts: PATCH_PARTS },
        ],
      }),
    });
    const res = await post('/v1/responses', user, gate.id, { ...CODEX_BODY, stream: true });
    const frames = await framesOf(res);
    const types = frames.map((f) => f.type);
    expect(types).not.toContain('response.function_call_arguments.delta');
    const added = frames.find((f) => f.type === 'response.output_item.added' && f.output_index === 1);
    expect(added?.item).toEqual({
      id: expect.stringMatching(/^ctc_/),
      type: 'custom_tool_call',
      status: 'in_progress',
      call_id: PATCH_CALL.id,
      name: 'apply_patch',
      input: '',
    });
    const itemId = (added?.item as { id?: string } | undefined)?.id;
    const deltas = frames.filter((f) => f.type === 'response.custom_tool_call_input.delta');
    // More than one piece: the text went out as it came, not once at the end.
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((d) => d.item_id === itemId && d.output_index === 1)).toBe(true);
    expect(deltas.map((d) => d.delta).join('')).toBe(PATCH);
    const done = frames.find((f) => f.type === 'response.custom_tool_call_input.done');
    expect(done).toMatchObject({ item_id: itemId, output_index: 1, input: PATCH });
    const itemDone = frames.find((f) => f.type === 'response.output_item.done' && f.output_index === 1);
    expect(itemDone?.item).toMatchObject({ type: 'custom_tool_call', status: 'completed', input: PATCH });
    expect(types.indexOf('response.custom_tool_call_input.done')).toBeLessThan(
      types.lastIndexOf('response.output_item.done'),
    );
    const completed = frames.at(-1) as { type: string; response: { output: Record<string, unknown>[] } };
    expect(completed.type).toBe('response.completed');
    expect(completed.response.output[1]).toMatchObject({ type: 'custom_tool_call', input: PATCH });
    // The sequence numbers still count up one by one.
    expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
  });

  it('/v1/chat/completions: a `custom` tool call, plain and streamed; earlier custom calls reach Anthropic', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: gateModel });
    const body = {
      model: 'gpt-5',
      messages: [
        ...say('Fix the sum.'),
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'custom', custom: { name: 'apply_patch', input: '*** Begin Patch' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'Invalid patch' },
      ],
      tools: [{ type: 'custom', custom: { name: 'apply_patch', description: 'Edits files with a patch.' } }],
    };
    anthropic.upstream.reply({
      type: 'json',
      body: message({ content: [{ type: 'tool_use', ...PATCH_CALL }] }),
    });
    const res = await post('/v1/chat/completions', user, gate.id, body);
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as { choices: { message: { tool_calls: unknown[] } }[] };
    expect(answer.choices[0]?.message.tool_calls).toEqual([
      { id: PATCH_CALL.id, type: 'custom', custom: { name: 'apply_patch', input: PATCH } },
    ]);
    expect(anthropic.upstream.last().body.messages[1].content).toEqual([
      { type: 'tool_use', id: 'call_1', name: 'apply_patch', input: { input: '*** Begin Patch' } },
    ]);

    anthropic.upstream.reply({
      type: 'sse',
      frames: streamFrames({
        blocks: [{ type: 'tool_use', id: PATCH_CALL.id, name: 'apply_patch', jsonParts: PATCH_PARTS }],
      }),
    });
    const streamed = await post('/v1/chat/completions', user, gate.id, { ...body, stream: true });
    const calls = (await framesOf(streamed)).flatMap(
      (f) =>
        (f.choices as { delta: { tool_calls?: Record<string, unknown>[] } }[])[0]?.delta.tool_calls ?? [],
    );
    expect(calls[0]).toMatchObject({
      index: 0,
      id: PATCH_CALL.id,
      type: 'custom',
      custom: { name: 'apply_patch' },
    });
    expect(calls.every((c) => c.function === undefined)).toBe(true);
    expect(calls.map((c) => (c.custom as { input: string }).input).join('')).toBe(PATCH);
  });
});

describe('reasoning settings across families', () => {
  it('a Responses effort is a thinking budget on Anthropic, fitted under the output cap', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      model: 'anthropic/claude-sonnet-4-5',
      allowOverrides: { maxTokens: true },
    });
    anthropic.upstream.reply({ type: 'json', body: message({}) });
    const high = { ...CODEX_BODY, reasoning: { effort: 'high' }, max_output_tokens: 64_000 };
    const res = await post('/v1/responses', user, gate.id, high);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(anthropic.upstream.last().body.thinking).toEqual({ type: 'enabled', budget_tokens: 32_000 });
    expect(res.headers.get('x-gatehouse-dropped-fields')?.split(',')).not.toContain('reasoning.effort');

    // Under a smaller cap the budget is half of it, so the answer keeps the other half.
    anthropic.upstream.reply({ type: 'json', body: message({}) });
    await post('/v1/responses', user, gate.id, { ...high, max_output_tokens: 8_000 });
    expect(anthropic.upstream.last().body.thinking).toEqual({ type: 'enabled', budget_tokens: 4_000 });

    const [entry] = await logEntriesOf(app, gate.id);
    expect(entry?.providerRequest).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 32_000 } });
  });

  it('leaves thinking out, and names the effort, where Anthropic would refuse it', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'anthropic/claude-sonnet-4-5', maxTokens: 1_500 });
    anthropic.upstream.reply({ type: 'json', body: message({}) });
    // No budget of at least 1,024 fits under half of a 1,500-token cap.
    const res = await post('/v1/responses', user, gate.id, { ...CODEX_BODY, reasoning: { effort: 'low' } });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(anthropic.upstream.last().body.thinking).toBeUndefined();
    expect(res.headers.get('x-gatehouse-dropped-fields')?.split(',')).toContain('reasoning.effort');

    // In a tool loop Anthropic wants back the thinking of the last call, which Codex cannot send.
    const loop = await createGate(app, user, { model: 'anthropic/claude-sonnet-4-5' });
    anthropic.upstream.reply({ type: 'json', body: message({}) });
    const next = await post('/v1/responses', user, loop.id, {
      ...CODEX_BODY,
      input: [
        ...CODEX_BODY.input,
        { type: 'custom_tool_call', call_id: 'call_1', name: 'apply_patch', input: PATCH },
        { type: 'custom_tool_call_output', call_id: 'call_1', output: 'Done!' },
      ],
    });
    expect(next.status, await next.clone().text()).toBe(200);
    expect(anthropic.upstream.last().body.thinking).toBeUndefined();
    expect(next.headers.get('x-gatehouse-dropped-fields')?.split(',')).toContain('reasoning.effort');
    const [entry] = await logEntriesOf(app, loop.id);
    expect(entry?.ignoredOverrides).toContain('dropped:reasoning.effort');
  });

  it('a chat reasoning_effort is a thinking budget on Anthropic too', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'anthropic/claude-sonnet-4-5', maxTokens: 16_000 });
    anthropic.upstream.reply({ type: 'json', body: message({}) });
    const res = await post('/v1/chat/completions', user, gate.id, {
      model: 'gpt-5',
      messages: say('Think.'),
      reasoning_effort: 'medium',
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(anthropic.upstream.last().body.thinking).toEqual({ type: 'enabled', budget_tokens: 8_000 });
  });

  it('Anthropic thinking is an effort on an OpenAI reasoning model, and named on any other', async () => {
    const user = await signUpUser(app);
    const reasoning = await createGate(app, user, { model: 'openai/gpt-5' });
    const body = { model: 'claude-opus-5-5', max_tokens: 32_000, messages: say('Think.') };
    for (const [budget, effort] of [
      [2_048, 'low'],
      [10_000, 'medium'],
      [31_999, 'high'],
    ] as const) {
      openai.upstream.reply({ type: 'json', body: completion('openai', { content: 'Done.' }) });
      const res = await messages(app, user, reasoning.id, {
        ...body,
        thinking: { type: 'enabled', budget_tokens: budget },
      });
      expect(res.status, await res.clone().text()).toBe(200);
      expect(openai.upstream.last().body.reasoning_effort).toBe(effort);
      expect(res.headers.get('x-gatehouse-dropped-fields')).toBeNull();
    }

    const plain = await createGate(app, user, { model: 'openai/gpt-4o-mini' });
    openai.upstream.reply({ type: 'json', body: completion('openai', { content: 'Done.' }) });
    const res = await messages(app, user, plain.id, {
      ...body,
      thinking: { type: 'enabled', budget_tokens: 10_000 },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(openai.upstream.last().body.reasoning_effort).toBeUndefined();
    expect(res.headers.get('x-gatehouse-dropped-fields')).toBe('thinking');
    const [entry] = await logEntriesOf(app, plain.id);
    expect(entry?.ignoredOverrides).toContain('dropped:thinking');
  });
});

describe('hosted tools a model of another family cannot run', () => {
  it('a strict gate refuses them with a 400 naming the tool and the model; by default they are left out', async () => {
    const user = await signUpUser(app);
    const strict = await createGate(app, user, {
      model: 'anthropic/claude-sonnet-4-5',
      strictHostedTools: true,
    });
    expect(strict.strictHostedTools).toBe(true);
    const refused = await post('/v1/responses', user, strict.id, CODEX_BODY);
    expect(refused.status).toBe(400);
    const error = ((await refused.json()) as { error: { message: string; type: string } }).error;
    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toContain('"web_search"');
    expect(error.message).toContain('anthropic/claude-sonnet-4-5');
    // Anthropic's own shape on /v1/messages, for its server tools on an OpenAI model.
    const openaiStrict = await createGate(app, user, {
      model: 'openai/gpt-4o-mini',
      strictHostedTools: true,
    });
    const server = await messages(app, user, openaiStrict.id, {
      messages: say('Look it up.'),
      tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 5 }],
    });
    expect(server.status).toBe(400);
    const anthropicError = (await server.json()) as { type: string; error: { message: string } };
    expect(anthropicError.type).toBe('error');
    expect(anthropicError.error.message).toContain('"web_search_20250305"');
    expect(anthropicError.error.message).toContain('openai/gpt-4o-mini');
    // Refused before any provider call, and logged as a failure.
    expect(anthropic.upstream.requests).toHaveLength(0);
    expect(openai.upstream.requests).toHaveLength(0);
    const [entry] = await logEntriesOf(app, strict.id);
    expect(entry?.success).toBe(false);

    // The same request through a gate without the option: answered, the tool left out and named.
    const lenient = await createGate(app, user, { model: 'anthropic/claude-sonnet-4-5' });
    expect(lenient.strictHostedTools).toBe(false);
    anthropic.upstream.reply({ type: 'json', body: message({}) });
    const answered = await post('/v1/responses', user, lenient.id, CODEX_BODY);
    expect(answered.status, await answered.clone().text()).toBe(200);
    expect(answered.headers.get('x-gatehouse-dropped-fields')?.split(',')).toContain('tools.web_search');
    expect(JSON.stringify(anthropic.upstream.last().body.tools)).not.toContain('web_search');
  });

  it('a strict gate still forwards hosted tools to a model of their own family', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini', strictHostedTools: true });
    openai.upstream.reply({
      type: 'json',
      body: { id: 'resp_1', object: 'response', status: 'completed', output: [], usage: null },
    });
    const res = await post('/v1/responses', user, gate.id, CODEX_BODY);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(openai.upstream.last().body.tools).toContainEqual({ type: 'web_search' });
  });

  it('is a setting of the gate, read and changed through REST and GraphQL', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {});
    const patched = await app.request(`/v1/gates/${gate.id}`, {
      method: 'PATCH',
      headers: user.auth,
      json: { strictHostedTools: true },
    });
    expect(patched.status, await patched.clone().text()).toBe(200);
    expect(((await patched.json()) as { strictHostedTools: boolean }).strictHostedTools).toBe(true);
    const bad = await app.request(`/v1/gates/${gate.id}`, {
      method: 'PATCH',
      headers: user.auth,
      json: { strictHostedTools: 'yes' },
    });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('strictHostedTools');
    const read = await graphql<{ gate: { strictHostedTools: boolean } }>(
      app,
      user,
      'query($id: ID!) { gate(id: $id) { strictHostedTools } }',
      { id: gate.id },
    );
    expect(read.data?.gate.strictHostedTools).toBe(true);
  });
});

describe('what a translation leaves out, named whatever the client sent', () => {
  // A tool type nested 2,000 deep (found by property-security) once made naming it overflow the
  // stack (502 "failed inside the gateway"); a key with a line break would be no header value.
  const deep = (n: number): unknown => (n === 0 ? 'x' : [deep(n - 1)]);

  it('names an unknown tool type by its kind and a strange key in printable ASCII, on every route', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/echo' });
    const odd = { 'weird\nkey,é': 1 };
    const routes: [string, unknown][] = [
      [
        '/v1/chat/completions',
        { model: 'x', messages: say('hi'), tools: [{ type: deep(2000), function: { name: 'f' } }], ...odd },
      ],
      ['/v1/responses', { model: 'x', input: 'hi', tools: [{ type: deep(2000) }], ...odd }],
      [
        '/v1/messages',
        { model: 'x', max_tokens: 10, messages: say('hi'), tools: [{ type: deep(2000), name: 't' }], ...odd },
      ],
    ];
    for (const [path, body] of routes) {
      const res = await app.request(path, {
        method: 'POST',
        headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
        json: body,
      });
      const text = await res.text();
      expect(res.status, `${path}: ${text}`).toBeLessThan(500);
      if (res.status === 200) {
        const dropped = res.headers.get('x-gatehouse-dropped-fields') ?? '';
        expect(dropped, path).toContain('tools.object');
        expect(dropped, path).toContain('weird?key??');
        expect(dropped.length, path).toBeLessThan(1000);
      }
    }
  });
});
