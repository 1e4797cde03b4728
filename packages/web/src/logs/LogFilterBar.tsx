import { END_USER_MAX_LENGTH, LOG_STATUSES } from '@gatehouse/rules/logs';
import { useState } from 'react';
import { hasFilters, type LogFilters, TIME_PRESETS, type TimePreset } from './logSearch.ts';

const PRESET_LABELS: Record<TimePreset, string> = {
  '1h': 'Last hour',
  '24h': 'Last 24 hours',
  '7d': 'Last 7 days',
  '30d': 'Last 30 days',
};

const STATUS_LABELS = { success: 'Success', failed: 'Failed' } as const;
const BOUND_LABELS = { since: 'From', until: 'To' } as const;

type TimeChoice = 'all' | TimePreset | 'custom';

/** "2026-11-21T14:05" in local time, what a datetime-local input shows. */
export function toLocalInput(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

function fromLocalInput(value: string): string | undefined {
  if (!value) return undefined;
  const time = new Date(value).getTime();
  return Number.isNaN(time) ? undefined : new Date(time).toISOString();
}

/** One filter set to a value, or dropped when there is none. */
function withFilter<K extends keyof LogFilters>(
  filters: LogFilters,
  key: K,
  value: LogFilters[K] | undefined,
): LogFilters {
  const { [key]: _old, ...others } = filters;
  return value ? { ...others, [key]: value } : others;
}

type FilterProps = { filters: LogFilters; onChange: (filters: LogFilters) => void };

type Named = readonly { id: string; name: string }[];

/**
 * Gate, status, API key, end user and time window; every change is a new address (see
 * logSearch.ts).
 */
export function LogFilterBar({
  filters,
  gates,
  apiKeys = [],
  onChange,
}: FilterProps & { gates: Named; apiKeys?: Named }) {
  const unknownGate = filters.gateId && !gates.some((gate) => gate.id === filters.gateId);
  const unknownKey = filters.apiKeyId && !apiKeys.some((key) => key.id === filters.apiKeyId);

  return (
    <form className="filters" aria-label="Filter the log" onSubmit={(event) => event.preventDefault()}>
      <div className="field">
        <label htmlFor="filter-gate">Gate</label>
        <select
          id="filter-gate"
          value={filters.gateId ?? ''}
          onChange={(event) => onChange(withFilter(filters, 'gateId', event.target.value))}
        >
          <option value="">All gates</option>
          {gates.map((gate) => (
            <option key={gate.id} value={gate.id}>
              {gate.name}
            </option>
          ))}
          {unknownGate && (
            <option value={filters.gateId}>Deleted gate ({filters.gateId?.slice(0, 8)}…)</option>
          )}
        </select>
      </div>
      <div className="field">
        <label htmlFor="filter-status">Status</label>
        <select
          id="filter-status"
          value={filters.status ?? ''}
          onChange={(event) => {
            const status = LOG_STATUSES.find((s) => s === event.target.value);
            onChange(withFilter(filters, 'status', status));
          }}
        >
          <option value="">All statuses</option>
          {LOG_STATUSES.map((status) => (
            <option key={status} value={status}>
              {STATUS_LABELS[status]}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="filter-key">API key</label>
        <select
          id="filter-key"
          value={filters.apiKeyId ?? ''}
          onChange={(event) => onChange(withFilter(filters, 'apiKeyId', event.target.value))}
        >
          <option value="">All keys</option>
          {apiKeys.map((key) => (
            <option key={key.id} value={key.id}>
              {key.name}
            </option>
          ))}
          {unknownKey && <option value={filters.apiKeyId}>Key {filters.apiKeyId?.slice(0, 8)}…</option>}
        </select>
      </div>
      {/* Keyed by the filter, so a link or "Clear filters" shows what the address says. */}
      <EndUserFilter key={filters.endUser ?? ''} filters={filters} onChange={onChange} />
      <TimeFilter filters={filters} onChange={onChange} />
      {hasFilters(filters) && (
        <button type="button" className="button subtle clear-filters" onClick={() => onChange({})}>
          Clear filters
        </button>
      )}
    </form>
  );
}

/** Typed freely; applied on Enter or on leaving the field, not at each keystroke. */
function EndUserFilter({ filters, onChange }: FilterProps) {
  const [text, setText] = useState(filters.endUser ?? '');
  const apply = () => {
    const endUser = text.trim();
    if (endUser !== (filters.endUser ?? '')) onChange(withFilter(filters, 'endUser', endUser));
  };
  return (
    <div className="field">
      <label htmlFor="filter-end-user">End user</label>
      <input
        id="filter-end-user"
        type="search"
        placeholder="Any"
        maxLength={END_USER_MAX_LENGTH}
        value={text}
        onChange={(event) => setText(event.target.value)}
        onBlur={apply}
        onKeyDown={(event) => {
          if (event.key === 'Enter') apply();
        }}
      />
    </div>
  );
}

/** A preset window ending now, or a custom one with its From and To. */
function TimeFilter({ filters, onChange }: FilterProps) {
  const time: TimeChoice = filters.range ?? (filters.since || filters.until ? 'custom' : 'all');
  const { range: _range, since: _since, until: _until, ...rest } = filters;

  const onTime = (choice: TimeChoice) => {
    if (choice === 'all') onChange(rest);
    else if (choice === 'custom') {
      // Start from the last 24 hours; the inputs appear to narrow it.
      onChange({ ...rest, since: new Date(Date.now() - 86_400_000).toISOString() });
    } else onChange({ ...rest, range: choice });
  };

  return (
    <>
      <div className="field">
        <label htmlFor="filter-time">Time</label>
        <select id="filter-time" value={time} onChange={(event) => onTime(event.target.value as TimeChoice)}>
          <option value="all">All time</option>
          {TIME_PRESETS.map((preset) => (
            <option key={preset} value={preset}>
              {PRESET_LABELS[preset]}
            </option>
          ))}
          <option value="custom">Custom…</option>
        </select>
      </div>
      {time === 'custom' &&
        (['since', 'until'] as const).map((bound) => (
          <div key={bound} className="field">
            <label htmlFor={`filter-${bound}`}>{BOUND_LABELS[bound]}</label>
            <input
              id={`filter-${bound}`}
              type="datetime-local"
              value={toLocalInput(filters[bound])}
              onChange={(event) => onChange(withFilter(filters, bound, fromLocalInput(event.target.value)))}
            />
          </div>
        ))}
    </>
  );
}
