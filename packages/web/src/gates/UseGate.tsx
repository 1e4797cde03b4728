import { TASK_TYPES } from '@gatehouse/rules/gate';
import { useState } from 'react';
import { Link } from 'wouter';
import { fromEnum } from '../graphqlEnums.ts';
import { CopyButton } from '../logs/CopyButton.tsx';
import type { GateDetailData } from './gateDetail.ts';
import { gateCurl, gateOpenAISnippet } from './gateRequest.ts';

/**
 * How to call the gate: its id to copy and a ready request at this server's address. Open
 * (and announced) right after the gate is created; folded on later visits.
 */
export function UseGate({
  gate,
  created,
}: {
  gate: Pick<GateDetailData, 'id' | 'name' | 'taskType'>;
  created: boolean;
}) {
  // Open on the first showing after creation; the user's own toggling after that is the browser's.
  const [open] = useState(created);
  const origin = window.location.origin;
  const target = { id: gate.id, taskType: fromEnum(TASK_TYPES, gate.taskType) };
  const curl = gateCurl(origin, target);
  const sdk = gateOpenAISnippet(origin, target);
  return (
    <details className="use-gate" open={open}>
      <summary>{created ? 'Gate created: call it' : 'Call this gate'}</summary>
      {created && (
        <p role="status">
          <strong>{gate.name}</strong> is ready. Its settings are below; requests through it show in{' '}
          <Link href="/logs">Logs</Link>.
        </p>
      )}
      <div className="copy-row">
        <label htmlFor="gate-id">Gate id</label>
        <input id="gate-id" className="mono" readOnly value={gate.id} />
        <CopyButton text={gate.id} label="Copy id" />
      </div>
      <p className="muted small">
        Set <code>GATEHOUSE_API_KEY</code> to one of your <Link href="/api-keys">API keys</Link>.
      </p>
      <figure className="code-block" aria-label="Example request with curl">
        <pre className="mono">{curl}</pre>
        <CopyButton text={curl} label="Copy curl command" />
      </figure>
      {sdk && (
        <figure className="code-block" aria-label="Example request with the OpenAI SDK">
          <pre className="mono">{sdk}</pre>
          <CopyButton text={sdk} label="Copy OpenAI SDK code" />
        </figure>
      )}
    </details>
  );
}
