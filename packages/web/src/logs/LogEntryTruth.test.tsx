import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { FragmentOf } from 'gql.tada';
import { useState } from 'react';
import { Client, fetchExchange, Provider } from 'urql';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ResultOf } from '../graphql.ts';
import { LogEntryPanel } from './LogEntryPanel.tsx';
import { type LogEntryFragment, LogEntryView } from './LogEntryView.tsx';
import { curlOf } from './logEntryJson.ts';

type Entry = ResultOf<typeof LogEntryFragment>;

const GATE = '0b6f3c1e-8a0d-4a8e-9a61-2f1d3c4b5a69';
const FIRST = '11111111-2222-4333-8444-555555555555';

const base: Entry = {
  id: '5e2d7f0a-1b3c-4d5e-8f90-a1b2c3d4e5f6',
  gateId: GATE,
  gateName: 'support-bot',
  endpoint: '/v1/chat/completions',
  modelRequested: 'claude-x',
  modelUsed: 'mock/echo',
  promptTokens: 12,
  completionTokens: 3,
  totalTokens: 15,
  tokensEstimated: false,
  costUsd: 0.00826,
  latencyMs: 900,
  success: true,
  statusCode: 200,
  errorCode: null,
  errorMessage: null,
  sessionId: 'run-1',
  apiKeyId: '9d1f2e3a-4b5c-4d6e-8f70-8a9b0c1d2e3f',
  apiKeyName: 'ci',
  endUser: null,
  inferredAction: null,
  toolCalls: null,
  toolResults: null,
  ignoredOverrides: ['model'],
  spendingWarning: false,
  stream: false,
  createdAt: '2026-11-21T12:00:00.000Z',
  attempts: [
    {
      model: 'mock/smart',
      provider: 'mock',
      ok: false,
      status: null,
      error: 'timed out',
      latencyMs: 300,
      costUsd: 0.00825,
      costUpperBound: true,
    },
    {
      model: 'mock/echo',
      provider: 'mock',
      ok: true,
      status: 200,
      error: null,
      latencyMs: 5,
      costUsd: 0.00001,
    },
  ],
  metadata: null,
  providerRequest: { model: 'echo', messages: [{ role: 'user', content: 'hello' }] },
  providerResponse: { choices: [{ message: { role: 'assistant', content: 'Echo: hello' } }] },
  clientRequest: null,
  replayOf: FIRST,
  replays: [],
  conversation: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'What is the weather?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: '{"sky":"clear"}' },
    { role: 'assistant', content: 'Clear skies in Oslo.' },
  ],
  replayRequest: { endpoint: '/v3/chat', data: { messages: [{ role: 'user', content: "it's me" }] } },
  media: [],
};

const entry = (fields: Partial<Entry> = {}) =>
  ({ ...base, ...fields }) as unknown as FragmentOf<typeof LogEntryFragment>;

describe('an entry that tells the truth', () => {
  it('gives each attempt its cost, marking a worst-case charge as an upper bound', () => {
    render(<LogEntryView entry={entry()} />);
    const rows = within(screen.getByRole('table')).getAllByRole('row');
    expect(within(rows[0] as HTMLElement).getByText('Cost')).toBeTruthy();
    expect(within(rows[1] as HTMLElement).getByText('upper bound')).toBeTruthy();
    expect(within(rows[2] as HTMLElement).queryByText('upper bound')).toBeNull();
  });

  it('says a model the client named on an override-free gate was answered by the gate’s model', () => {
    render(<LogEntryView entry={entry()} />);
    expect(screen.getByText('Named by the client, answered by the gate’s model.')).toBeTruthy();
  });

  it('shows what an image request was billed, not "0 + 0 = 0" tokens', () => {
    render(
      <LogEntryView
        entry={entry({
          promptTokens: 0,
          completionTokens: 0,
          totalTokens: 0,
          attempts: [
            {
              model: 'mock/image',
              provider: 'mock',
              ok: true,
              status: 200,
              error: null,
              latencyMs: 5,
              billed: { quantity: 2, unit: 'images' },
            },
          ],
        })}
      />,
    );
    expect(screen.getByText('Billed').nextSibling?.textContent).toBe('2 images');
    expect(screen.queryByText('Tokens')).toBeNull();
  });

  it('notes an embeddings fallback that changed the dimensions, and not one that kept them', () => {
    const embedded = (dimensions: number, shapeNote?: string) =>
      entry({
        endpoint: '/v3/embeddings',
        modelRequested: 'mock/embed',
        modelUsed: 'mock/embed-large',
        ignoredOverrides: [],
        conversation: null,
        attempts: [
          { model: 'mock/embed', provider: 'mock', ok: false, status: 503, error: 'down', latencyMs: 3 },
          {
            model: 'mock/embed-large',
            provider: 'mock',
            ok: true,
            status: 200,
            error: null,
            latencyMs: 5,
            dimensions,
            ...(shapeNote && { shapeNote }),
          },
        ],
      });
    const { unmount } = render(<LogEntryView entry={embedded(3072, 'dimensions 1536 -> 3072')} />);
    const note = screen.getByRole('note', { name: 'Answer shape changed' });
    expect(note.textContent).toContain('A fallback answered in another shape than the primary model gives');
    expect(within(note).getByText('dimensions 1536 -> 3072')).toBeTruthy();
    expect(screen.getByText('Dimensions').nextSibling?.textContent).toBe('3,072');
    unmount();

    render(<LogEntryView entry={embedded(256)} />);
    expect(screen.queryByRole('note', { name: 'Answer shape changed' })).toBeNull();
    expect(screen.getByText('Dimensions').nextSibling?.textContent).toBe('256');
  });

  it('shows the conversation as messages: system, user, a tool call, its result, the answer', () => {
    render(<LogEntryView entry={entry()} />);
    const conversation = screen.getByRole('region', { name: 'Conversation' });
    const items = within(conversation).getAllByRole('listitem');
    expect(items.map((item) => item.getAttribute('aria-label'))).toEqual([
      'system',
      'user',
      'assistant',
      'tool result',
      'assistant (the answer)',
    ]);
    expect(within(items[2] as HTMLElement).getByText('weather')).toBeTruthy();
    expect(within(items[4] as HTMLElement).getByText('Clear skies in Oslo.')).toBeTruthy();
  });

  it('links the gate, the session, the key and the entry it replayed; Replay opens Try it', () => {
    render(<LogEntryView entry={entry()} />);
    expect(screen.getByRole('link', { name: 'support-bot' }).getAttribute('href')).toBe(`/gates/${GATE}`);
    expect(screen.getByRole('link', { name: 'run-1' }).getAttribute('href')).toBe(
      `/gates/${GATE}/session?key=run-1`,
    );
    expect(screen.getByRole('link', { name: 'ci' }).getAttribute('href')).toBe('/api-keys');
    expect(screen.getByRole('link', { name: FIRST }).getAttribute('href')).toBe(`/logs/${FIRST}`);
    expect(screen.getByRole('link', { name: 'Replay' }).getAttribute('href')).toBe(
      `/gates/${GATE}?tab=try&replay=${base.id}`,
    );
    expect(screen.getByRole('button', { name: 'Copy as curl' })).toBeTruthy();
  });

  it('offers no Replay or curl for a request it cannot rebuild', () => {
    render(<LogEntryView entry={entry({ replayRequest: null })} />);
    expect(screen.queryByRole('link', { name: 'Replay' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Copy as curl' })).toBeNull();
  });
});

describe('Copy as curl', () => {
  it('is a runnable curl: the gateway URL, the key as $GATEHOUSE_KEY, the body quoted for the shell', () => {
    const curl = curlOf('http://127.0.0.1:3000', GATE, {
      endpoint: '/v3/chat',
      data: { messages: [{ role: 'user', content: "it's me" }] },
    });
    expect(curl).toBe(
      [
        "curl -s 'http://127.0.0.1:3000/v3/chat' \\",
        '  -H "authorization: Bearer $GATEHOUSE_KEY" \\',
        "  -H 'content-type: application/json' \\",
        `  -d '{"gateId":"${GATE}","data":{"messages":[{"role":"user","content":"it'\\''s me"}]}}'`,
      ].join('\n'),
    );
  });
});

/** A row that opens the entry panel, as the log's table does. */
function PanelOpener() {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        the row
      </button>
      {open && <LogEntryPanel id={base.id} onClose={() => setOpen(false)} />}
    </>
  );
}

function renderOpener() {
  const fetch = async () =>
    new Response(JSON.stringify({ data: { log: { __typename: 'LogEntry', ...base } } }), {
      headers: { 'content-type': 'application/json' },
    });
  const client = new Client({ url: 'http://gatehouse.test/graphql', exchanges: [fetchExchange], fetch });
  render(
    <Provider value={client}>
      <PanelOpener />
    </Provider>,
  );
}

describe('the entry panel', () => {
  afterEach(() => vi.restoreAllMocks());

  it('takes focus when it opens and gives it back to the row when it closes', async () => {
    const user = userEvent.setup();
    renderOpener();
    expect(screen.queryByRole('dialog')).toBeNull();
    await user.click(screen.getByRole('button', { name: 'the row' }));
    expect(document.activeElement).toBe(screen.getByRole('heading', { name: 'Log entry' }));
    await user.keyboard('{Escape}');
    await waitFor(() => expect(screen.queryByRole('heading', { name: 'Log entry' })).toBeNull());
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'the row' }));
  });

  it('is a modal dialog where it covers the window, a phone’s, and still gives the focus back', async () => {
    // A window of 390 px, as far as the panel asks.
    vi.spyOn(window, 'matchMedia').mockImplementation(
      (query) =>
        ({
          media: query,
          matches: query === '(max-width: 960px)',
          addEventListener: () => {},
          removeEventListener: () => {},
        }) as unknown as MediaQueryList,
    );
    const showModal = vi.spyOn(HTMLDialogElement.prototype, 'showModal');
    const user = userEvent.setup();
    renderOpener();
    await user.click(screen.getByRole('button', { name: 'the row' }));
    const dialog = screen.getByRole('dialog', { name: 'Log entry' }) as HTMLDialogElement;
    expect(dialog.open).toBe(true);
    // Modal (happy-dom knows no :modal): the page behind is inert, Tab stays inside.
    expect(showModal).toHaveBeenCalledTimes(1);
    expect(document.activeElement).toBe(within(dialog).getByRole('heading', { name: 'Log entry' }));
    await user.click(within(dialog).getByRole('button', { name: 'Close the entry' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'the row' }));
  });
});
