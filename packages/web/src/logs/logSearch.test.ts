import { describe, expect, it } from 'vitest';
import {
  entryIdOf,
  exportHref,
  LOG_PAGE_SIZE,
  logsSearch,
  logsVariables,
  nextPage,
  pageNumber,
  parseLogsSearch,
  previousPage,
  withEntry,
  withFilters,
} from './logSearch.ts';

const gateId = '0b6f3c1e-8a0d-4a8e-9a61-2f1d3c4b5a69';
const entry = '5e2d7f0a-1b3c-4d5e-8f90-a1b2c3d4e5f6';

describe('the logs page address', () => {
  it('reads filters, page and open entry, and writes them back the same', () => {
    const search = `?gateId=${gateId}&status=failed&range=24h&after=c2&back=c1&entry=${entry}`;
    const state = parseLogsSearch(search);
    expect(state).toEqual({
      filters: { gateId, status: 'failed', range: '24h' },
      after: 'c2',
      back: ['c1'],
      entry,
    });
    expect(logsSearch(state)).toBe(search);
  });

  it('is empty for the unfiltered first page', () => {
    expect(parseLogsSearch('')).toEqual({ filters: {}, back: [] });
    expect(logsSearch({ filters: {}, back: [] })).toBe('');
  });

  it('drops what a hand-edited link got wrong instead of sending it to the server', () => {
    const state = parseLogsSearch(
      '?gateId=not-a-uuid&status=maybe&range=1y&since=yesterday&after=a%20b&entry=42',
    );
    expect(state).toEqual({ filters: {}, back: [] });
  });

  it('keeps a custom window as ISO instants, and drops an end before its start', () => {
    expect(parseLogsSearch('?since=2026-11-20T10:00:00Z&until=2026-11-21T10:00:00.000Z').filters).toEqual({
      since: '2026-11-20T10:00:00.000Z',
      until: '2026-11-21T10:00:00.000Z',
    });
    expect(parseLogsSearch('?since=2026-11-21T10:00:00Z&until=2026-11-20T10:00:00Z').filters).toEqual({
      since: '2026-11-21T10:00:00.000Z',
    });
  });

  it('prefers a preset window over since and until', () => {
    const state = parseLogsSearch('?range=7d&since=2026-11-20T10:00:00Z');
    expect(state.filters).toEqual({ range: '7d' });
  });

  it('ignores a cursor stack without a current cursor', () => {
    expect(parseLogsSearch('?back=c1,c2')).toEqual({ filters: {}, back: [] });
  });
});

describe('paging with a cursor stack', () => {
  const first = parseLogsSearch('?status=success');

  it('goes forward by pushing the current cursor, and back by popping it', () => {
    const second = nextPage(first, 'c1');
    expect(logsSearch(second)).toBe('?status=success&after=c1');
    const third = nextPage(second, 'c2');
    expect(logsSearch(third)).toBe('?status=success&after=c2&back=c1');
    const fourth = nextPage(third, 'c3');
    expect(fourth.back).toEqual(['c1', 'c2']);
    expect(pageNumber(fourth)).toBe(4);

    expect(previousPage(fourth)).toEqual(third);
    expect(previousPage(third)).toEqual(second);
    expect(previousPage(second)).toEqual(first);
    expect(pageNumber(first)).toBe(1);
  });

  it('keeps the open entry while paging', () => {
    const open = withEntry(first, entry);
    expect(nextPage(open, 'c1').entry).toBe(entry);
    expect(withEntry(open, undefined)).toEqual(first);
  });

  it('starts again at the first page when the filters change, with the entry still open', () => {
    const deep = withEntry(nextPage(nextPage(first, 'c1'), 'c2'), entry);
    expect(withFilters(deep, { status: 'failed' })).toEqual({
      filters: { status: 'failed' },
      back: [],
      entry,
    });
  });
});

describe('the logs query variables', () => {
  const now = Date.parse('2026-11-21T12:00:00.000Z');

  it('turns a preset into a window ending now', () => {
    expect(logsVariables(parseLogsSearch(`?range=1h&gateId=${gateId}&after=c1`), now)).toEqual({
      first: LOG_PAGE_SIZE,
      after: 'c1',
      gateId,
      status: null,
      apiKeyId: null,
      endUser: null,
      q: null,
      model: null,
      errorCode: null,
      failureClass: null,
      sessionId: null,
      endpoint: null,
      streamed: null,
      hasToolCalls: null,
      metadataKey: null,
      metadataValue: null,
      since: '2026-11-21T11:00:00.000Z',
      until: null,
    });
  });

  it('carries every search filter, from the address to the query and to the export', () => {
    const search =
      '?q=refund+%22late+parcel%22&model=openai%2Fgpt-4o-mini&errorCode=upstream_error&sessionId=s-1' +
      '&endUser=alice&endpoint=%2Fv1%2Fchat%2Fcompletions&metadataKey=team&metadataValue=billing' +
      '&failureClass=provider_error&streamed=true&hasToolCalls=false&range=1h';
    const state = parseLogsSearch(search);
    expect(state.filters).toEqual({
      q: 'refund "late parcel"',
      model: 'openai/gpt-4o-mini',
      errorCode: 'upstream_error',
      sessionId: 's-1',
      endUser: 'alice',
      endpoint: '/v1/chat/completions',
      metadataKey: 'team',
      metadataValue: 'billing',
      failureClass: 'provider_error',
      streamed: 'true',
      hasToolCalls: 'false',
      range: '1h',
    });
    expect(logsSearch(state)).toBe(search);
    expect(logsVariables(state, now)).toMatchObject({
      q: 'refund "late parcel"',
      failureClass: 'PROVIDER_ERROR',
      streamed: true,
      hasToolCalls: false,
      metadataKey: 'team',
      metadataValue: 'billing',
    });
    const href = new URL(exportHref(state.filters, 'csv', now), 'http://x');
    expect(href.pathname).toBe('/v1/logs/export');
    expect(Object.fromEntries(href.searchParams)).toEqual({
      format: 'csv',
      q: 'refund "late parcel"',
      model: 'openai/gpt-4o-mini',
      errorCode: 'upstream_error',
      sessionId: 's-1',
      endUser: 'alice',
      endpoint: '/v1/chat/completions',
      metadataKey: 'team',
      metadataValue: 'billing',
      failureClass: 'provider_error',
      streamed: 'true',
      hasToolCalls: 'false',
      since: '2026-11-21T11:00:00.000Z',
    });
  });

  it('drops a metadata value without its key, and values the server would refuse', () => {
    expect(
      parseLogsSearch(`?metadataValue=x&streamed=yes&failureClass=oops&q=${'a'.repeat(201)}`).filters,
    ).toEqual({});
  });

  it('takes a pasted request id, and nothing else, as an entry to open', () => {
    expect(entryIdOf(`  ${entry.toUpperCase()} `)).toBe(entry);
    expect(entryIdOf('req_123')).toBeNull();
  });

  it('passes a custom window as it is', () => {
    const state = parseLogsSearch('?status=failed&since=2026-11-01T00:00:00Z&until=2026-11-02T00:00:00Z');
    expect(logsVariables(state, now)).toMatchObject({
      status: 'FAILED',
      since: '2026-11-01T00:00:00.000Z',
      until: '2026-11-02T00:00:00.000Z',
    });
  });
});

describe('the key and end-user filters in the address', () => {
  const apiKeyId = '9d1f2e3a-4b5c-4d6e-8f70-8a9b0c1d2e3f';

  it('round-trip, and reach the query as its variables', () => {
    const search = `?apiKeyId=${apiKeyId}&endUser=customer+42`;
    const state = parseLogsSearch(search);
    expect(state.filters).toEqual({ apiKeyId, endUser: 'customer 42' });
    expect(logsSearch(state)).toBe(search);
    expect(logsVariables(state, Date.now())).toMatchObject({ apiKeyId, endUser: 'customer 42' });
    expect(logsVariables(parseLogsSearch(''), Date.now())).toMatchObject({ apiKeyId: null, endUser: null });
  });

  it('drop a key that is no UUID and an end user longer than the server takes', () => {
    const state = parseLogsSearch(`?apiKeyId=k-1&endUser=${'x'.repeat(257)}`);
    expect(state.filters).toEqual({});
  });
});
