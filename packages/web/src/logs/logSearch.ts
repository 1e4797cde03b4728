/**
 * The logs page keeps all of its state in the address: filters, the page (a cursor and the
 * cursors of the pages before it, since the server pages forward only) and the open entry.
 * A copied link reopens exactly what was on screen.
 */
import {
  endUserSchema,
  FAILURE_CLASSES,
  type FailureClass,
  LOG_STATUSES,
  type LogStatus,
} from '@gatehouse/rules/logs';
import { toEnum } from '../graphqlEnums.ts';

export const LOG_PAGE_SIZE = 50;

export const TIME_PRESETS = ['1h', '24h', '7d', '30d'] as const;
export type TimePreset = (typeof TIME_PRESETS)[number];

const PRESET_MS: Record<TimePreset, number> = {
  '1h': 3_600_000,
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
};

/** The free-text filters, each as the server names it; applied as typed, within the server's bounds. */
export const TEXT_FILTERS = [
  'q',
  'model',
  'errorCode',
  'sessionId',
  'endUser',
  'endpoint',
  'metadataKey',
  'metadataValue',
] as const;
export type TextFilter = (typeof TEXT_FILTERS)[number];

/** The longest value the server takes for each (longer ones are dropped from a hand-edited link). */
export const TEXT_FILTER_MAX: Record<TextFilter, number> = {
  q: 200,
  model: 200,
  errorCode: 100,
  sessionId: 200,
  endUser: 256,
  endpoint: 200,
  metadataKey: 200,
  metadataValue: 1000,
};

export const YES_NO = ['true', 'false'] as const;
export type YesNo = (typeof YES_NO)[number];

export type LogFilters = {
  gateId?: string;
  status?: LogStatus;
  /** The API key the requests came with. */
  apiKeyId?: string;
  /** The end user the requests named. */
  endUser?: string;
  /** Words of the prompt, the answer or the error. */
  q?: string;
  model?: string;
  errorCode?: string;
  failureClass?: FailureClass;
  sessionId?: string;
  endpoint?: string;
  streamed?: YesNo;
  hasToolCalls?: YesNo;
  metadataKey?: string;
  metadataValue?: string;
  /** A window ending now; exclusive with since/until. */
  range?: TimePreset;
  /** ISO-8601 instants. */
  since?: string;
  until?: string;
};

export type LogsState = {
  filters: LogFilters;
  /** The cursor this page starts after; none on the first page. */
  after?: string;
  /** The `after` of each earlier page, oldest first (the first page, which has none, excluded). */
  back: string[];
  /** The log entry open in the detail panel. */
  entry?: string;
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Cursors are base64url, so a comma can separate them.
const CURSOR = /^[A-Za-z0-9_-]+={0,2}$/;

const isPreset = (value: string | null): value is TimePreset =>
  value !== null && (TIME_PRESETS as readonly string[]).includes(value);
const isStatus = (value: string | null): value is LogStatus =>
  value !== null && (LOG_STATUSES as readonly string[]).includes(value);
const isFailureClass = (value: string | null): value is FailureClass =>
  value !== null && (FAILURE_CLASSES as readonly string[]).includes(value);
const isYesNo = (value: string | null): value is YesNo => value === 'true' || value === 'false';

/** An ISO instant from the address, or undefined when it is not a date (a hand-edited link). */
function instant(value: string | null): string | undefined {
  if (!value) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : new Date(time).toISOString();
}

/** Reads the address; anything malformed is dropped rather than sent to the server. */
export function parseLogsSearch(search: string): LogsState {
  const params = new URLSearchParams(search);
  const filters: LogFilters = {};
  const gateId = params.get('gateId');
  if (gateId && UUID.test(gateId)) filters.gateId = gateId;
  const status = params.get('status');
  if (isStatus(status)) filters.status = status;
  const apiKeyId = params.get('apiKeyId');
  if (apiKeyId && UUID.test(apiKeyId)) filters.apiKeyId = apiKeyId;
  for (const name of TEXT_FILTERS) {
    const value = params.get(name)?.trim();
    if (!value || value.length > TEXT_FILTER_MAX[name]) continue;
    if (name === 'endUser' && !endUserSchema.safeParse(value).success) continue;
    filters[name] = value;
  }
  // A value is looked for under a key only.
  if (!filters.metadataKey) delete filters.metadataValue;
  const failureClass = params.get('failureClass');
  if (isFailureClass(failureClass)) filters.failureClass = failureClass;
  const streamed = params.get('streamed');
  if (isYesNo(streamed)) filters.streamed = streamed;
  const hasToolCalls = params.get('hasToolCalls');
  if (isYesNo(hasToolCalls)) filters.hasToolCalls = hasToolCalls;
  const range = params.get('range');
  if (isPreset(range)) {
    filters.range = range;
  } else {
    const since = instant(params.get('since'));
    const until = instant(params.get('until'));
    if (since) filters.since = since;
    if (until && (!since || until > since)) filters.until = until;
  }

  const state: LogsState = { filters, back: [] };
  const after = params.get('after');
  if (after && CURSOR.test(after)) {
    state.after = after;
    state.back = (params.get('back') ?? '').split(',').filter((cursor) => CURSOR.test(cursor));
  }
  const entry = params.get('entry');
  if (entry && UUID.test(entry)) state.entry = entry;
  return state;
}

/** The filters as query parameters, in a stable order (the time window as the address keeps it). */
function filterParams(filters: LogFilters, params: URLSearchParams) {
  const { gateId, status, apiKeyId, failureClass, streamed, hasToolCalls, range, since, until } = filters;
  if (gateId) params.set('gateId', gateId);
  if (status) params.set('status', status);
  if (apiKeyId) params.set('apiKeyId', apiKeyId);
  for (const name of TEXT_FILTERS) {
    const value = filters[name];
    if (value) params.set(name, value);
  }
  if (failureClass) params.set('failureClass', failureClass);
  if (streamed) params.set('streamed', streamed);
  if (hasToolCalls) params.set('hasToolCalls', hasToolCalls);
  if (range) params.set('range', range);
  else {
    if (since) params.set('since', since);
    if (until) params.set('until', until);
  }
}

/** Writes the state as a query string (with its `?`, or empty), in a stable order. */
export function logsSearch(state: LogsState): string {
  const params = new URLSearchParams();
  filterParams(state.filters, params);
  if (state.after) {
    params.set('after', state.after);
    if (state.back.length > 0) params.set('back', state.back.join(','));
  }
  if (state.entry) params.set('entry', state.entry);
  const query = params.toString();
  return query ? `?${query}` : '';
}

/** New filters start again at the first page; the open entry stays open. */
export function withFilters(state: LogsState, filters: LogFilters): LogsState {
  return { filters, back: [], ...(state.entry && { entry: state.entry }) };
}

export function withEntry(state: LogsState, entry: string | undefined): LogsState {
  const { entry: _closed, ...rest } = state;
  return entry ? { ...rest, entry } : rest;
}

/** The page after this one, which starts after `endCursor`. */
export function nextPage(state: LogsState, endCursor: string): LogsState {
  return { ...state, after: endCursor, back: state.after ? [...state.back, state.after] : [] };
}

/** The page before this one, from the cursor stack; the first page has no cursor. */
export function previousPage(state: LogsState): LogsState {
  const { after: _current, ...rest } = state;
  const back = state.back.slice(0, -1);
  const after = state.back.at(-1);
  return after ? { ...rest, after, back } : { ...rest, back: [] };
}

/** 1 on the first page. */
export function pageNumber(state: LogsState): number {
  return state.after ? state.back.length + 2 : 1;
}

export function hasFilters(filters: LogFilters): boolean {
  return Object.values(filters).some(Boolean);
}

/** The window the filters name, as instants: a preset ends at `now`. */
function windowOf(filters: LogFilters, now: number) {
  const { range, since, until } = filters;
  return {
    since: range ? new Date(now - PRESET_MS[range]).toISOString() : (since ?? null),
    until: range ? null : (until ?? null),
  };
}

/** The filter arguments of the `logs` and `logSummary` queries; a preset window ends at `now`. */
export function filterVariables(filters: LogFilters, now: number) {
  const { gateId, status, apiKeyId, failureClass, streamed, hasToolCalls } = filters;
  const text = Object.fromEntries(TEXT_FILTERS.map((name) => [name, filters[name] ?? null])) as Record<
    TextFilter,
    string | null
  >;
  return {
    gateId: gateId ?? null,
    status: status ? toEnum(status) : null,
    apiKeyId: apiKeyId ?? null,
    ...text,
    failureClass: failureClass ? toEnum(failureClass) : null,
    streamed: streamed ? streamed === 'true' : null,
    hasToolCalls: hasToolCalls ? hasToolCalls === 'true' : null,
    ...windowOf(filters, now),
  };
}

/** The `logs` query's variables; a preset window ends at `now`. */
export function logsVariables(state: LogsState, now: number) {
  return { first: LOG_PAGE_SIZE, after: state.after ?? null, ...filterVariables(state.filters, now) };
}

/** GET /v1/logs/export's address for these filters (the window as instants, as the list has it). */
export function exportHref(filters: LogFilters, format: 'csv' | 'jsonl', now: number): string {
  const params = new URLSearchParams({ format });
  const { range: _range, since: _since, until: _until, ...rest } = filters;
  const window = windowOf(filters, now);
  filterParams(
    { ...rest, ...(window.since && { since: window.since }), ...(window.until && { until: window.until }) },
    params,
  );
  return `/v1/logs/export?${params}`;
}

/** An entry's id as pasted (a request id, with or without spaces), or null when it is none. */
export function entryIdOf(text: string): string | null {
  const id = text.trim().toLowerCase();
  return UUID.test(id) ? id : null;
}
