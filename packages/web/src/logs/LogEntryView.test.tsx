import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { FragmentOf } from 'gql.tada';
import { describe, expect, it } from 'vitest';
import type { ResultOf } from '../graphql.ts';
import { type LogEntryFragment, LogEntryView } from './LogEntryView.tsx';

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

type Entry = ResultOf<typeof LogEntryFragment>;

const base: Entry = {
  id: '5e2d7f0a-1b3c-4d5e-8f90-a1b2c3d4e5f6',
  gateId: '0b6f3c1e-8a0d-4a8e-9a61-2f1d3c4b5a69',
  gateName: 'Image bot',
  endpoint: '/v1/images/generations',
  modelRequested: 'openai/gpt-image-1',
  modelUsed: 'openai/gpt-image-1',
  promptTokens: 12,
  completionTokens: 0,
  totalTokens: 12,
  tokensEstimated: true,
  costUsd: 0.04,
  latencyMs: 4200,
  success: true,
  statusCode: 200,
  errorCode: null,
  errorMessage: null,
  sessionId: null,
  apiKeyId: null,
  apiKeyName: null,
  endUser: null,
  inferredAction: null,
  toolCalls: null,
  toolResults: null,
  ignoredOverrides: ['temperature'],
  spendingWarning: true,
  stream: false,
  createdAt: '2026-11-21T12:00:00.000Z',
  attempts: [
    { model: 'openai/gpt-image-1', provider: 'openai', ok: true, status: 200, error: null, latencyMs: 4100 },
  ],
  metadata: null,
  providerRequest: { model: 'gpt-image-1', prompt: 'a lighthouse' },
  providerResponse: { created: 1, data: [{ b64_json: PNG }, { url: 'https://images.example.com/b.webp' }] },
  clientRequest: null,
  replayOf: null,
  replays: [],
  conversation: null,
  replayRequest: null,
  media: [],
};

// Fragment masking is a type; at run time the entry is the plain object the query returned.
const entry = (fields: Partial<Entry> = {}) =>
  ({ ...base, ...fields }) as unknown as FragmentOf<typeof LogEntryFragment>;

describe('the log entry view', () => {
  it('names the API key, as it was, and the end user the request came from', () => {
    render(
      <LogEntryView
        entry={entry({
          apiKeyId: '9d1f2e3a-4b5c-4d6e-8f70-8a9b0c1d2e3f',
          apiKeyName: 'batch job',
          endUser: 'customer-42',
        })}
      />,
    );
    expect(screen.getByText('API key').nextElementSibling?.textContent).toContain('batch job');
    expect(screen.getByText('End user').nextElementSibling?.textContent).toBe('customer-42');
  });

  it('says a request with no key came from the dashboard, and shows no end user it did not name', () => {
    render(<LogEntryView entry={entry()} />);
    expect(screen.getByText('API key').nextElementSibling?.textContent).toContain('the dashboard');
    expect(screen.queryByText('End user')).toBeNull();
  });

  it('says when the request was logged, in UTC and saying so', () => {
    render(<LogEntryView entry={entry({ createdAt: '2026-11-27T10:41:03.512Z' })} />);
    expect(screen.getByText('2026-11-27 10:41:03 UTC').getAttribute('datetime')).toBe(
      '2026-11-27T10:41:03.512Z',
    );
  });

  it('previews each image of the answer, with copy and download', () => {
    render(<LogEntryView entry={entry()} />);
    const images = within(screen.getByRole('region', { name: 'Images (2)' }));
    const [inline, remote] = images.getAllByRole('img');
    expect(inline?.getAttribute('src')).toBe(`data:image/png;base64,${PNG}`);
    expect(remote?.getAttribute('src')).toBe('https://images.example.com/b.webp');
    expect(images.getAllByRole('button', { name: 'Copy image' })).toHaveLength(2);
    expect(images.getAllByRole('button', { name: 'Download' })).toHaveLength(2);
    // Only a remote image has an address worth copying.
    expect(images.getAllByRole('button', { name: 'Copy URL' })).toHaveLength(1);
  });

  it('says what the gate did besides answering: estimated tokens, ignored overrides, spending warning', () => {
    render(<LogEntryView entry={entry()} />);
    expect(screen.getByText('estimated')).toBeTruthy();
    expect(screen.getByText('temperature')).toBeTruthy();
    expect(screen.getByText(/reached the gate’s spending limit/)).toBeTruthy();
    expect(screen.queryByRole('note', { name: 'Error' })).toBeNull();
  });

  it('calls a request a fallback only when an attempt failed before the one that answered', () => {
    const attempt = (model: string, ok: boolean) => ({
      model,
      provider: 'mock',
      ok,
      status: ok ? 200 : 503,
      error: ok ? null : 'down',
      latencyMs: 30,
    });
    const modelUsed = (fields: Partial<Entry>) => {
      const { unmount } = render(<LogEntryView entry={entry(fields)} />);
      const text = screen.getByText('Model used').nextElementSibling?.textContent;
      unmount();
      return text;
    };
    // The client named the gate (or a model the gate does not use): one attempt, no fallback.
    expect(
      modelUsed({ modelRequested: 'gate', modelUsed: 'mock/echo', attempts: [attempt('mock/echo', true)] }),
    ).toBe('mock/echo');
    expect(
      modelUsed({
        modelRequested: 'claude-sonnet-4-5',
        modelUsed: 'mock/echo',
        attempts: [attempt('mock/echo', true)],
      }),
    ).toBe('mock/echo');
    // The primary failed and the next model answered.
    expect(
      modelUsed({
        modelRequested: 'mock/echo',
        modelUsed: 'mock/fast',
        attempts: [attempt('mock/echo', false), attempt('mock/fast', true)],
      }),
    ).toBe('mock/fastfallback');
    // Every attempt failed: nothing answered, so nothing fell back to.
    expect(
      modelUsed({
        success: false,
        statusCode: 502,
        modelUsed: null,
        attempts: [attempt('mock/echo', false), attempt('mock/fast', false)],
      }),
    ).toBe('—');
  });

  it('shows a failure’s code and message, and each attempt', () => {
    render(
      <LogEntryView
        entry={entry({
          success: false,
          statusCode: 502,
          errorCode: 'upstream_error',
          errorMessage: 'No model could answer',
          modelUsed: null,
          spendingWarning: false,
          providerResponse: { error: { message: 'down' } },
          attempts: [
            {
              model: 'openai/gpt-image-1',
              provider: 'openai',
              ok: false,
              status: 503,
              error: 'down',
              latencyMs: 30,
            },
          ],
        })}
      />,
    );
    const error = screen.getByRole('note', { name: 'Error' });
    expect(error.textContent).toContain('upstream_error · HTTP 502');
    expect(error.textContent).toContain('No model could answer');
    const attempts = within(screen.getByRole('region', { name: 'Attempts (1)' }));
    expect(attempts.getAllByRole('cell').map((cell) => cell.textContent)).toEqual([
      '1',
      'openai/gpt-image-1',
      'openai',
      'failed 503',
      'down',
      '—',
      '30 ms',
    ]);
    expect(screen.queryByRole('region', { name: /Images/ })).toBeNull();
  });

  it('lists tool calls with their arguments as JSON, and tool results', () => {
    render(
      <LogEntryView
        entry={entry({
          providerResponse: { choices: [] },
          toolCalls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
            },
          ],
          toolResults: [{ tool_call_id: 'call_0', content: 'sunny' }],
        })}
      />,
    );
    const calls = within(screen.getByRole('region', { name: 'Tool calls (1)' }));
    expect(calls.getByText('get_weather')).toBeTruthy();
    expect(calls.getByText('"city":')).toBeTruthy();
    expect(calls.getByText('"Oslo"')).toBeTruthy();
    const results = within(screen.getByRole('region', { name: 'Tool results (1)' }));
    expect(results.getByText('call_0')).toBeTruthy();
    expect(results.getByText('sunny')).toBeTruthy();
  });
});

describe('a request refused before any provider call', () => {
  it('shows what the client sent beside its error; an answered one has no such panel', () => {
    const { unmount } = render(
      <LogEntryView
        entry={entry({
          success: false,
          statusCode: 400,
          errorCode: 'invalid_request',
          errorMessage: 'Invalid request: messages: Invalid input: expected array, received string',
          providerRequest: null,
          providerResponse: null,
          clientRequest: { model: 'mock/echo', messages: 'hello there' },
        })}
      />,
    );
    const sent = within(screen.getByRole('region', { name: 'Client request' }));
    expect(sent.getByText('"hello there"')).toBeTruthy();
    expect(screen.getByText('Nothing was sent to a provider.')).toBeTruthy();
    unmount();
    render(<LogEntryView entry={entry()} />);
    expect(screen.queryByRole('region', { name: 'Client request' })).toBeNull();
  });
});

describe('the JSON viewer', () => {
  it('shortens a long string until asked for all of it', async () => {
    const long = 'x'.repeat(1000);
    render(<LogEntryView entry={entry({ providerResponse: { text: long }, providerRequest: null })} />);
    const response = within(screen.getByRole('region', { name: 'Response' }));
    expect(response.queryByText(`"${long}"`)).toBeNull();
    await userEvent.click(response.getByRole('button', { name: 'show all 1,000 characters' }));
    expect(response.getByText(`"${long}"`)).toBeTruthy();
    expect(screen.getByText('Nothing was sent to a provider.')).toBeTruthy();
  });

  it('collapses and expands every level', async () => {
    const { container } = render(
      <LogEntryView entry={entry({ providerResponse: { a: { b: { c: { d: { e: { f: 1 } } } } } } })} />,
    );
    const response = within(screen.getByRole('region', { name: 'Response' }));
    const tree = () => Array.from(container.querySelectorAll('[aria-label="Response"] details'));
    // Five levels start open, the sixth closed.
    expect(tree().map((node) => (node as HTMLDetailsElement).open)).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
    ]);
    await userEvent.click(response.getByRole('button', { name: 'Collapse all' }));
    expect(tree().map((node) => (node as HTMLDetailsElement).open)).toEqual([
      true,
      false,
      false,
      false,
      false,
      false,
    ]);
    await userEvent.click(response.getByRole('button', { name: 'Expand all' }));
    expect(tree().every((node) => (node as HTMLDetailsElement).open)).toBe(true);
  });
});
