import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { answerOf, chat, completions, logEntryOf, say, sseEvents } from './support/chat.ts';
import { createGate, signUpUser } from './support/factories.ts';

const app = useTestApp();

const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
      required: ['city', 'unit'],
    },
  },
};
const CLOCK_TOOL = { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } };

type OpenAIToolAnswer = {
  choices: {
    message: { role: string; content: string | null; tool_calls?: unknown[] };
    finish_reason: string;
  }[];
};

describe('tool calls', () => {
  it('answers finishReason tool_calls with the call, and logs it in toolCalls', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const answer = await answerOf(
      await chat(app, user, gate.id, {
        messages: say('Weather in Oslo? [mock:tool=get_weather]'),
        tools: [CLOCK_TOOL, WEATHER_TOOL],
        toolChoice: 'auto',
      }),
    );
    expect(answer.finishReason).toBe('tool_calls');
    expect(answer.content).toBeNull();
    expect(answer.toolCalls).toHaveLength(1);
    const call = answer.toolCalls?.[0];
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
    expect(JSON.parse(call?.function.arguments as string)).toEqual({ city: 'mock', unit: 'c' });

    const entry = await logEntryOf(app, answer.id);
    expect(entry.toolCalls).toEqual(answer.toolCalls);
    expect(entry.toolResults).toBeNull();
    expect(entry.providerRequest).toMatchObject({ tools: [CLOCK_TOOL, WEATHER_TOOL], toolChoice: 'auto' });
  });

  it('logs the tool result a follow-up request carries in toolResults', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const first = await answerOf(
      await chat(app, user, gate.id, {
        messages: say('Weather in Oslo? [mock:tool=get_weather]'),
        tools: [WEATHER_TOOL],
      }),
    );
    const call = first.toolCalls?.[0] as NonNullable<typeof first.toolCalls>[number];
    const followUp = await answerOf(
      await chat(app, user, gate.id, {
        messages: [
          { role: 'user', content: 'Weather in Oslo?' },
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: call.id, content: '{"temperatureC":-3,"conditions":"snow"}' },
        ],
        tools: [WEATHER_TOOL],
      }),
    );
    expect(followUp.finishReason).toBe('stop');
    expect(followUp.toolCalls).toBeUndefined();
    const entry = await logEntryOf(app, followUp.id);
    expect(entry.toolResults).toEqual([
      { tool_call_id: call.id, content: '{"temperatureC":-3,"conditions":"snow"}' },
    ]);
    expect(entry.toolCalls).toBeNull();
    const sent = entry.providerRequest as { messages: unknown[] };
    expect(sent.messages[1]).toEqual({ role: 'assistant', content: null, tool_calls: [call] });
  });

  it('answers with text when the named tool is not offered', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const answer = await answerOf(
      await chat(app, user, gate.id, { messages: say('hi [mock:tool=get_weather]') }),
    );
    expect(answer).toMatchObject({ finishReason: 'stop', content: 'Echo: hi' });
    expect(answer.toolCalls).toBeUndefined();
  });

  it('answers tool_calls in OpenAI format on the compatible endpoint', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await completions(app, user, gate.id, {
      messages: say('Weather? [mock:tool=get_weather]'),
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as OpenAIToolAnswer;
    expect(body.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_mock_0', type: 'function', function: { name: 'get_weather' } }],
      },
    });
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect(entry.toolCalls).toEqual(body.choices[0]?.message.tool_calls);
  });

  it('streams a tool call as tool_calls deltas with the finish reason tool_calls', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await completions(app, user, gate.id, {
      stream: true,
      messages: say('Weather? [mock:tool=get_weather]'),
      tools: [WEATHER_TOOL],
    });
    expect(res.status).toBe(200);
    type ToolChunk = {
      choices: {
        delta: {
          tool_calls?: {
            index: number;
            id?: string;
            type?: string;
            function: { name?: string; arguments: string };
          }[];
        };
        finish_reason: string | null;
      }[];
    };
    const chunks = (await sseEvents(res)).slice(0, -1) as ToolChunk[];
    const fragments = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(fragments[0]).toMatchObject({
      index: 0,
      id: 'call_mock_0',
      type: 'function',
      function: { name: 'get_weather' },
    });
    expect(JSON.parse(fragments.map((f) => f.function.arguments).join(''))).toEqual({
      city: 'mock',
      unit: 'c',
    });
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls');
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect(entry).toMatchObject({
      stream: true,
      toolCalls: [expect.objectContaining({ id: 'call_mock_0' })],
    });
  });
});
