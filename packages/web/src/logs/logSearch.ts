/**
 * The logs page keeps all of its state in the address: filters, the page (a cursor and the
 * cursors of the pages before it, since the server pages forward only) and the open entry.
 * A copied link reopens exactly what was on screen.
 */
import { endUserSchema, LOG_STATUSES, type LogStatus } from '@gatehouse/rules/logs';
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

export type LogFilters = {
  gateId?: string;
  status?: LogStatus;
  /** The API key the requests came with. */
  apiKeyId?: string;
  /** The end user the requests named. */
  endUser?: string;
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
  const endUser = params.get('endUser');
  if (endUser !== null && endUserSchema.safeParse(endUser).success) filters.endUser = endUser;
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

/** Writes the state as a query string (with its `?`, or empty), in a stable order. */
export function logsSearch(state: LogsState): string {
  const params = new URLSearchParams();
  const { gateId, status, apiKeyId, endUser, range, since, until } = state.filters;
  if (gateId) params.set('gateId', gateId);
  if (status) params.set('status', status);
  if (apiKeyId) params.set('apiKeyId', apiKeyId);
  if (endUser) params.set('endUser', endUser);
  if (range) params.set('range', range);
  else {
    if (since) params.set('since', since);
    if (until) params.set('until', until);
  }
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
  return Boolean(
    filters.gateId ||
      filters.status ||
      filters.apiKeyId ||
      filters.endUser ||
      filters.range ||
      filters.since ||
      filters.until,
  );
}

/** The `logs` query's variables; a preset window ends at `now`. */
export function logsVariables(state: LogsState, now: number) {
  const { gateId, status, apiKeyId, endUser, range, since, until } = state.filters;
  return {
    first: LOG_PAGE_SIZE,
    after: state.after ?? null,
    gateId: gateId ?? null,
    status: status ? toEnum(status) : null,
    apiKeyId: apiKeyId ?? null,
    endUser: endUser ?? null,
    since: range ? new Date(now - PRESET_MS[range]).toISOString() : (since ?? null),
    until: range ? null : (until ?? null),
  };
}
