import { FAILURE_CLASSES, LOG_STATUSES } from '@gatehouse/rules/logs';
import { useId, useState } from 'react';
import {
  entryIdOf,
  hasFilters,
  type LogFilters,
  TEXT_FILTER_MAX,
  type TextFilter,
  TIME_PRESETS,
  type TimePreset,
  YES_NO,
  type YesNo,
} from './logSearch.ts';

const PRESET_LABELS: Record<TimePreset, string> = {
  '1h': 'Last hour',
  '24h': 'Last 24 hours',
  '7d': 'Last 7 days',
  '30d': 'Last 30 days',
};

const STATUS_LABELS = { success: 'Success', failed: 'Failed' } as const;
const FAILURE_LABELS = {
  provider_error: 'Provider error',
  limit_refusal: 'Limit refusal',
  rate_limit: 'Rate limit',
  client_error: 'Client error',
} as const;
const TEXT_LABELS: Record<Exclude<TextFilter, 'q'>, { label: string; placeholder: string }> = {
  model: { label: 'Model', placeholder: 'e.g. openai/gpt-4o-mini' },
  errorCode: { label: 'Error code', placeholder: 'e.g. upstream_error' },
  sessionId: { label: 'Session', placeholder: 'Any' },
  endUser: { label: 'End user', placeholder: 'Any' },
  endpoint: { label: 'Endpoint', placeholder: 'e.g. /v1/chat/completions' },
  metadataKey: { label: 'Metadata key', placeholder: 'Any' },
  metadataValue: { label: 'Metadata value', placeholder: 'Any' },
};
const YES_NO_FILTERS = {
  streamed: { label: 'Streamed', any: 'Streamed or not', true: 'Streamed', false: 'Not streamed' },
  hasToolCalls: { label: 'Tool calls', any: 'With or without', true: 'With tool calls', false: 'Without' },
} as const;
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
 * Words, then gate, status, failure class, API key, the free-text filters and the time window;
 * every change is a new address (see logSearch.ts). The request-id box opens that entry.
 */
export function LogFilterBar({
  filters,
  gates,
  apiKeys = [],
  onChange,
  onOpenEntry,
}: FilterProps & { gates: Named; apiKeys?: Named; onOpenEntry?: (id: string) => void }) {
  const unknownGate = filters.gateId && !gates.some((gate) => gate.id === filters.gateId);
  const unknownKey = filters.apiKeyId && !apiKeys.some((key) => key.id === filters.apiKeyId);
  // Keyed by their values, so a link or "Clear filters" shows what the address says.
  const text = (name: Exclude<TextFilter, 'q'>) => (
    <TextField key={`${name}:${filters[name] ?? ''}`} name={name} filters={filters} onChange={onChange} />
  );

  return (
    <>
      <div className="log-finders">
        <SearchBox key={filters.q ?? ''} filters={filters} onChange={onChange} />
        {onOpenEntry && <RequestIdBox onOpen={onOpenEntry} />}
      </div>
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
          <label htmlFor="filter-failure">Failure</label>
          <select
            id="filter-failure"
            value={filters.failureClass ?? ''}
            onChange={(event) => {
              const cls = FAILURE_CLASSES.find((c) => c === event.target.value);
              onChange(withFilter(filters, 'failureClass', cls));
            }}
          >
            <option value="">Any failure or none</option>
            {FAILURE_CLASSES.map((cls) => (
              <option key={cls} value={cls}>
                {FAILURE_LABELS[cls]}
              </option>
            ))}
          </select>
        </div>
        {text('model')}
        {text('errorCode')}
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
        {text('sessionId')}
        {text('endUser')}
        {text('endpoint')}
        {(['streamed', 'hasToolCalls'] as const).map((name) => (
          <div key={name} className="field">
            <label htmlFor={`filter-${name}`}>{YES_NO_FILTERS[name].label}</label>
            <select
              id={`filter-${name}`}
              value={filters[name] ?? ''}
              onChange={(event) => {
                const value = YES_NO.find((v) => v === event.target.value) as YesNo | undefined;
                onChange(withFilter(filters, name, value));
              }}
            >
              <option value="">{YES_NO_FILTERS[name].any}</option>
              {YES_NO.map((v) => (
                <option key={v} value={v}>
                  {YES_NO_FILTERS[name][v]}
                </option>
              ))}
            </select>
          </div>
        ))}
        {text('metadataKey')}
        {filters.metadataKey && text('metadataValue')}
        <TimeFilter filters={filters} onChange={onChange} />
        {hasFilters(filters) && (
          <button type="button" className="button subtle clear-filters" onClick={() => onChange({})}>
            Clear filters
          </button>
        )}
      </form>
    </>
  );
}

/** Typed freely; applied on Enter or on leaving the field, not at each keystroke. */
function TextField({ name, filters, onChange }: FilterProps & { name: Exclude<TextFilter, 'q'> }) {
  const [text, setText] = useState(filters[name] ?? '');
  const apply = () => {
    const value = text.trim();
    if (value === (filters[name] ?? '')) return;
    const next = withFilter(filters, name, value);
    // Without a key, a metadata value means nothing.
    onChange(name === 'metadataKey' && !value ? withFilter(next, 'metadataValue', undefined) : next);
  };
  const id = `filter-${name}`;
  return (
    <div className="field">
      <label htmlFor={id}>{TEXT_LABELS[name].label}</label>
      <input
        id={id}
        type="search"
        placeholder={TEXT_LABELS[name].placeholder}
        maxLength={TEXT_FILTER_MAX[name]}
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

/** Words of the prompts, answers and errors; searched on Enter or with the button. */
function SearchBox({ filters, onChange }: FilterProps) {
  const [text, setText] = useState(filters.q ?? '');
  return (
    <search className="log-search">
      <form
        aria-label="Search the log"
        onSubmit={(event) => {
          event.preventDefault();
          onChange(withFilter(filters, 'q', text.trim()));
        }}
      >
        <label htmlFor="log-search">Search prompts, answers and errors</label>
        <div className="inline-field">
          <input
            id="log-search"
            type="search"
            placeholder='Words, "a phrase", -without'
            maxLength={TEXT_FILTER_MAX.q}
            value={text}
            onChange={(event) => setText(event.target.value)}
          />
          <button type="submit" className="button">
            Search
          </button>
        </div>
      </form>
    </search>
  );
}

/** A request id (x-gatehouse-request-id, or an entry's id) opens its entry. */
function RequestIdBox({ onOpen }: { onOpen: (id: string) => void }) {
  const [text, setText] = useState('');
  const [wrong, setWrong] = useState(false);
  const hint = useId();
  return (
    <form
      className="request-id-box"
      aria-label="Open a request by id"
      onSubmit={(event) => {
        event.preventDefault();
        const id = entryIdOf(text);
        setWrong(!id);
        if (id) onOpen(id);
      }}
    >
      <label htmlFor="request-id">Request id</label>
      <div className="inline-field">
        <input
          id="request-id"
          type="search"
          placeholder="Paste a request id"
          spellCheck={false}
          value={text}
          aria-invalid={wrong}
          aria-describedby={wrong ? hint : undefined}
          onChange={(event) => {
            setText(event.target.value);
            setWrong(false);
          }}
        />
        <button type="submit" className="button">
          Open
        </button>
      </div>
      {wrong && (
        <p id={hint} className="field-error" role="alert">
          A request id looks like 0b6f3c1e-8a0d-4a8e-9a61-2f1d3c4b5a69.
        </p>
      )}
    </form>
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
