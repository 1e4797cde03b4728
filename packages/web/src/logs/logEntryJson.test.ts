import { describe, expect, it } from 'vitest';
import { attemptsOf, parsedIfJson, toolCallsOf, toolResultsOf } from './logEntryJson.ts';

describe('the JSON fields of a log entry, read for display', () => {
  it('reads the attempts, and skips what is not one', () => {
    expect(
      attemptsOf([
        {
          model: 'mock/echo',
          provider: 'mock',
          ok: false,
          status: null,
          error: 'timed out',
          latencyMs: 4,
          costUsd: 0.00825,
          costUpperBound: true,
        },
        {
          model: 'mock/image',
          provider: 'mock',
          ok: true,
          status: 200,
          error: null,
          latencyMs: 2,
          costUsd: 0.08,
          billed: { quantity: 2, unit: 'images' },
        },
        'not an attempt',
      ]),
    ).toEqual([
      {
        model: 'mock/echo',
        provider: 'mock',
        ok: false,
        status: null,
        error: 'timed out',
        latencyMs: 4,
        costUsd: 0.00825,
        costUpperBound: true,
        billed: null,
        dimensions: null,
        shapeNote: null,
      },
      {
        model: 'mock/image',
        provider: 'mock',
        ok: true,
        status: 200,
        error: null,
        latencyMs: 2,
        costUsd: 0.08,
        costUpperBound: false,
        billed: { quantity: 2, unit: 'images' },
        dimensions: null,
        shapeNote: null,
      },
    ]);
    expect(attemptsOf(null)).toEqual([]);
    expect(attemptsOf([{ ok: 'yes' }])).toEqual([
      {
        model: '—',
        provider: '—',
        ok: false,
        status: null,
        error: null,
        latencyMs: null,
        costUsd: null,
        costUpperBound: false,
        billed: null,
        dimensions: null,
        shapeNote: null,
      },
    ]);
  });

  it('shows tool call arguments as the JSON they hold', () => {
    expect(
      toolCallsOf([
        { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"city":"Oslo"}' } },
        { id: 'toolu_1', type: 'tool_use', name: 'search', input: { q: 'x' } },
      ]),
    ).toEqual([
      { id: 'call_1', name: 'lookup', arguments: { city: 'Oslo' } },
      { id: 'toolu_1', name: 'search', arguments: { q: 'x' } },
    ]);
    expect(toolCallsOf(null)).toBeNull();
  });

  it('reads tool results from the request, text left as text', () => {
    expect(
      toolResultsOf([
        { tool_call_id: 'call_1', content: '{"temp":21}' },
        { tool_call_id: 'call_2', content: 'sunny' },
      ]),
    ).toEqual([
      { toolCallId: 'call_1', content: { temp: 21 } },
      { toolCallId: 'call_2', content: 'sunny' },
    ]);
    expect(parsedIfJson('{not json')).toBe('{not json');
  });
});
