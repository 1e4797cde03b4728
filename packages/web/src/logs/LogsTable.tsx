import { type FragmentOf, readFragment } from 'gql.tada';
import type { MouseEvent } from 'react';
import { Link, useLocation } from 'wouter';
import { graphql } from '../graphql.ts';
import { TableWrap } from '../ui/TableWrap.tsx';
import { formatCount, formatLogTime, formatMs, formatUsd } from './format.ts';

/** What a row of the log table shows: the spec's columns, nothing of the payloads. */
export const LogRowFragment = graphql(`
  fragment LogRow on LogEntry {
    id
    gateId
    gateName
    modelRequested
    modelUsed
    promptTokens
    completionTokens
    totalTokens
    tokensEstimated
    costUsd
    latencyMs
    success
    statusCode
    errorCode
    createdAt
  }
`);

export type LogRowData = FragmentOf<typeof LogRowFragment>;

/** Status, Gate, Model, Tokens, Cost, Latency, Time; a row opens its entry. */
export function LogsTable({
  entries,
  entryHref,
  selectedId,
  caption,
  busy = false,
}: {
  entries: readonly LogRowData[];
  entryHref: (id: string) => string;
  selectedId?: string | undefined;
  caption: string;
  /** The rows are the last answer while a new one loads: dimmed, and said so. */
  busy?: boolean;
}) {
  const [, navigate] = useLocation();
  return (
    <TableWrap label={caption}>
      <table className="table logs-table" aria-busy={busy}>
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            <th>Status</th>
            <th>Gate</th>
            <th>Model</th>
            <th className="numeric">Tokens</th>
            <th className="numeric">Cost</th>
            <th className="numeric">Latency</th>
            <th>Time</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((data) => {
            const entry = readFragment(LogRowFragment, data);
            const href = entryHref(entry.id);
            // The time is the row's link (keyboard, new tab); a click anywhere else opens it too.
            const onClick = (event: MouseEvent) => {
              if ((event.target as HTMLElement).closest('a') || window.getSelection()?.toString()) return;
              navigate(href);
            };
            return (
              <tr
                key={entry.id}
                className={entry.id === selectedId ? 'clickable selected' : 'clickable'}
                onClick={onClick}
                data-entry-id={entry.id}
              >
                <td data-label="Status">
                  <StatusBadge success={entry.success} statusCode={entry.statusCode} />
                </td>
                <td className="gate-cell" data-label="Gate">
                  {entry.gateName ?? <span className="muted">No gate</span>}
                </td>
                <td data-label="Model">
                  <span className="mono">{entry.modelUsed ?? entry.modelRequested ?? '—'}</span>
                  {!entry.modelUsed && entry.modelRequested && <div className="muted small">requested</div>}
                </td>
                <td
                  className="numeric"
                  data-label="Tokens"
                  title={`${entry.promptTokens} input + ${entry.completionTokens} output`}
                >
                  {formatCount(entry.promptTokens)} + {formatCount(entry.completionTokens)}
                  {entry.tokensEstimated && <span className="muted small"> est.</span>}
                </td>
                <td className="numeric" data-label="Cost">
                  {formatUsd(entry.costUsd)}
                </td>
                <td className="numeric" data-label="Latency">
                  {formatMs(entry.latencyMs)}
                </td>
                <td data-label="Time">
                  <Link href={href} className="entry-link" title={entry.createdAt}>
                    {formatLogTime(entry.createdAt)}
                  </Link>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableWrap>
  );
}

export function StatusBadge({ success, statusCode }: { success: boolean; statusCode: number }) {
  return success ? (
    <span className="badge ok">success</span>
  ) : (
    <span className="badge danger" title={`HTTP ${statusCode}`}>
      error {statusCode}
    </span>
  );
}
