import { useState } from 'react';
import { CopyButton, copyText } from './CopyButton.tsx';

/** Strings longer than this (base64 images, long prompts) show their start until asked for more. */
const LONG_STRING = 400;

/**
 * A JSON value as a collapsible, pretty-printed tree in monospace, with a copy button for the
 * whole document. Levels below `openDepth` start open.
 */
export function JsonViewer({
  value,
  label,
  openDepth = 5,
}: {
  value: unknown;
  label: string;
  openDepth?: number;
}) {
  // A new key remounts the tree, so "expand all" and "collapse all" reset every node's own state.
  const [view, setView] = useState({ depth: openDepth, version: 0 });
  const text = JSON.stringify(value, null, 2) ?? 'undefined';
  return (
    <div className="json-viewer">
      <div className="json-toolbar">
        <span className="muted small">{label}</span>
        <div className="json-actions">
          <button
            type="button"
            className="button small subtle"
            onClick={() => setView((v) => ({ depth: Number.POSITIVE_INFINITY, version: v.version + 1 }))}
          >
            Expand all
          </button>
          <button
            type="button"
            className="button small subtle"
            onClick={() => setView((v) => ({ depth: 1, version: v.version + 1 }))}
          >
            Collapse all
          </button>
          <CopyButton copy={copyText(text)} label="Copy JSON" />
        </div>
      </div>
      <div className="json-tree mono" key={view.version}>
        <JsonNode value={value} depth={0} openDepth={view.depth} last />
      </div>
    </div>
  );
}

function JsonNode({
  name,
  value,
  depth,
  openDepth,
  last,
}: {
  name?: string | undefined;
  value: unknown;
  depth: number;
  openDepth: number;
  last: boolean;
}) {
  const comma = last ? '' : ',';
  const key = name === undefined ? null : <span className="json-key">{JSON.stringify(name)}: </span>;
  if (value !== null && typeof value === 'object') {
    const isArray = Array.isArray(value);
    const entries: [string | undefined, unknown][] = isArray
      ? value.map((item) => [undefined, item])
      : Object.entries(value);
    const [open, close] = isArray ? ['[', ']'] : ['{', '}'];
    if (entries.length === 0) {
      return (
        <div className="json-line">
          {key}
          {open}
          {close}
          {comma}
        </div>
      );
    }
    const count = `${entries.length} ${isArray ? (entries.length === 1 ? 'item' : 'items') : entries.length === 1 ? 'key' : 'keys'}`;
    return (
      <details className="json-node" open={depth < openDepth}>
        <summary>
          {key}
          {open}
          <span className="json-collapsed">
            {' '}
            … {close}
            {comma} <span className="json-count">{count}</span>
          </span>
        </summary>
        <div className="json-children">
          {entries.map(([childName, child], index) => (
            <JsonNode
              // Keys are unique within an object; array items have only their position.
              key={childName ?? index}
              name={childName}
              value={child}
              depth={depth + 1}
              openDepth={openDepth}
              last={index === entries.length - 1}
            />
          ))}
        </div>
        <div className="json-close">
          {close}
          {comma}
        </div>
      </details>
    );
  }
  return (
    <div className="json-line">
      {key}
      <JsonScalar value={value} />
      {comma}
    </div>
  );
}

function JsonScalar({ value }: { value: unknown }) {
  const [full, setFull] = useState(false);
  if (typeof value === 'string') {
    const quoted = JSON.stringify(value);
    if (quoted.length <= LONG_STRING || full) return <span className="json-string">{quoted}</span>;
    return (
      <>
        <span className="json-string">{quoted.slice(0, LONG_STRING)}…</span>{' '}
        <button type="button" className="link-button" onClick={() => setFull(true)}>
          show all {value.length.toLocaleString('en-US')} characters
        </button>
      </>
    );
  }
  if (typeof value === 'number') return <span className="json-number">{String(value)}</span>;
  if (typeof value === 'boolean') return <span className="json-boolean">{String(value)}</span>;
  return <span className="json-null">null</span>;
}
