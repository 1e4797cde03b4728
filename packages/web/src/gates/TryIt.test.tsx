import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Client, fetchExchange, Provider } from 'urql';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { TryIt } from './TryIt.tsx';

const GATE = '1f2e3d4c-5b6a-4789-8abc-def012345678';
const ENTRY = '5e2d7f0a-1b3c-4d5e-8f90-a1b2c3d4e5f6';

type Sent = {
  body: { gateId: string; data: { messages: { role: string; content: unknown }[] } };
  headers: Record<string, string>;
};

/** The gateway's /v3/chat as the mock model answers: "Echo: " and the last message. */
function fakeGateway() {
  const sent: Sent[] = [];
  vi.stubGlobal('fetch', async (_url: string, init: RequestInit) => {
    const body = JSON.parse(String(init.body)) as Sent['body'];
    sent.push({ body, headers: init.headers as Record<string, string> });
    const last = body.data.messages.at(-1);
    return new Response(
      JSON.stringify({
        id: crypto.randomUUID(),
        content: `Echo: ${last?.content}`,
        model: 'mock/echo',
        costUsd: 0,
        latencyMs: 1,
      }),
      { headers: { 'content-type': 'application/json' } },
    );
  });
  return sent;
}

function renderAt(path: string, taskType: 'chat' | 'embeddings' = 'chat') {
  const graphqlFetch = async () =>
    new Response(
      JSON.stringify({
        data: {
          log: {
            __typename: 'LogEntry',
            id: ENTRY,
            gateId: GATE,
            replayRequest: {
              endpoint: '/v3/chat',
              data: { messages: [{ role: 'user', content: 'from the log' }], temperature: 0.4 },
            },
          },
        },
      }),
      { headers: { 'content-type': 'application/json' } },
    );
  const client = new Client({
    url: 'http://gatehouse.test/graphql',
    exchanges: [fetchExchange],
    fetch: graphqlFetch,
  });
  const location = memoryLocation({ path });
  render(
    <Provider value={client}>
      <Router hook={location.hook} searchHook={location.searchHook}>
        <TryIt gateId={GATE} taskType={taskType} />
      </Router>
    </Provider>,
  );
}

afterEach(() => vi.unstubAllGlobals());

describe('Try it on a chat gate', () => {
  it('keeps the conversation: each answer appended, the next turn sending it all, with the parameters', async () => {
    const sent = fakeGateway();
    const user = userEvent.setup();
    renderAt(`/gates/${GATE}?tab=try`);
    await user.type(screen.getByLabelText('Input'), 'hello');
    await user.type(screen.getByLabelText('Temperature (this request)'), '0.2');
    await user.click(screen.getByRole('button', { name: 'Send' }));
    const conversation = await screen.findByRole('region', { name: 'Conversation' });
    await within(conversation).findByText('Echo: hello');
    await user.type(screen.getByLabelText('Input'), 'again');
    await user.click(screen.getByRole('button', { name: 'Send' }));
    await within(conversation).findByText('Echo: again');
    expect(sent[1]?.body.data).toEqual({
      messages: [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'Echo: hello' },
        { role: 'user', content: 'again' },
      ],
      temperature: 0.2,
    });
    expect(screen.getByRole('button', { name: 'Send' }).className).toContain('button primary');
  });

  it('replays a log entry: its request loaded, sent with x-gatehouse-replay-of', async () => {
    const sent = fakeGateway();
    const user = userEvent.setup();
    renderAt(`/gates/${GATE}?tab=try&replay=${ENTRY}`);
    await screen.findByText(/its request is\s+loaded/);
    expect((screen.getByLabelText('Temperature (this request)') as HTMLInputElement).value).toBe('0.4');
    await user.click(screen.getByRole('button', { name: 'Send' }));
    await screen.findByText('Echo: from the log');
    expect(sent[0]?.headers['x-gatehouse-replay-of']).toBe(ENTRY);
    expect(sent[0]?.body.data).toEqual({
      messages: [{ role: 'user', content: 'from the log' }],
      temperature: 0.4,
    });
    // Replayed once: the next turn is a turn of its own.
    await user.type(screen.getByLabelText('Input'), 'more');
    await user.click(screen.getByRole('button', { name: 'Send' }));
    await screen.findByText('Echo: more');
    expect(sent[1]?.headers['x-gatehouse-replay-of']).toBeUndefined();
  });
});

describe('Try it on an embeddings gate', () => {
  it('says beside the answer when a fallback answered in other dimensions, and not when none did', async () => {
    const shapes = ['dimensions 1536 -> 3072', null];
    const asked: string[] = [];
    vi.stubGlobal('fetch', async (url: string) => {
      asked.push(url);
      const shape = shapes.shift() ?? null;
      const dimensions = shape ? 3072 : 1536;
      return new Response(
        JSON.stringify({
          id: crypto.randomUUID(),
          model: shape ? 'mock/embed-large' : 'mock/embed',
          embeddings: [Array.from({ length: dimensions }, () => 0.5)],
          costUsd: 0,
          latencyMs: 1,
        }),
        {
          headers: {
            'content-type': 'application/json',
            ...(shape && { 'x-gatehouse-shape-changed': shape }),
          },
        },
      );
    });
    const user = userEvent.setup();
    renderAt(`/gates/${GATE}?tab=try`, 'embeddings');
    await user.type(screen.getByLabelText('Input'), 'a text');
    await user.click(screen.getByRole('button', { name: 'Send' }));
    const answer = await screen.findByRole('region', { name: 'Answer' });
    await within(answer).findByText(/3072 dimensions/);
    const note = within(answer).getByRole('note', { name: 'Answer shape changed' });
    expect(note.textContent).toContain('dimensions 1536 -> 3072');

    await user.click(screen.getByRole('button', { name: 'Send' }));
    await within(await screen.findByRole('region', { name: 'Answer' })).findByText(/1536 dimensions/);
    expect(screen.queryByRole('note', { name: 'Answer shape changed' })).toBeNull();
    expect(asked).toEqual(['/v3/embeddings', '/v3/embeddings']);
  });

  it('says when the answer came over an alert-only spending limit, and not when it did not', async () => {
    const answers = [
      { id: 'a1a1a1a1-0000-4000-8000-000000000001', warned: true },
      { id: 'a1a1a1a1-0000-4000-8000-000000000002', warned: false },
    ];
    vi.stubGlobal('fetch', async () => {
      const { id, warned } = answers.shift() ?? { id: 'none', warned: false };
      return new Response(
        JSON.stringify({ id, model: 'mock/embed', embeddings: [[0.5]], costUsd: 0, latencyMs: 1 }),
        {
          headers: {
            'content-type': 'application/json',
            ...(warned && { 'x-gatehouse-spending-warning': 'spending limit reached' }),
          },
        },
      );
    });
    const user = userEvent.setup();
    renderAt(`/gates/${GATE}?tab=try`, 'embeddings');
    await user.type(screen.getByLabelText('Input'), 'a text');
    await user.click(screen.getByRole('button', { name: 'Send' }));
    const answer = await screen.findByRole('region', { name: 'Answer' });
    const note = await within(answer).findByRole('note', { name: 'Over the spending limit' });
    expect(note.textContent).toContain('the request passed');

    // The next answer, under the limit again: its own entry shown, and no note.
    await user.click(screen.getByRole('button', { name: 'Send' }));
    const link = await screen.findByRole('link', { name: 'its log entry' });
    await waitFor(() => expect(link.getAttribute('href')).toBe('/logs/a1a1a1a1-0000-4000-8000-000000000002'));
    expect(screen.queryByRole('note', { name: 'Over the spending limit' })).toBeNull();
  });
});
