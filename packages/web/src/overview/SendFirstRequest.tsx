import { Link } from 'wouter';
import { CopyButton, copyText } from '../logs/CopyButton.tsx';

/** The curl command for a first chat request through a gate (its id, or a placeholder). */
export function firstRequestCurl(origin: string, gateId: string | undefined): string {
  const body = JSON.stringify({
    gateId: gateId ?? '<your gate id>',
    data: { messages: [{ role: 'user', content: 'Hello!' }] },
  });
  return [
    `curl ${origin}/v3/chat \\`,
    `  -H "Authorization: Bearer $GATEHOUSE_API_KEY" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '${body}'`,
  ].join('\n');
}

/** The empty overview: what to run to see something here. */
export function SendFirstRequest({ gate }: { gate: { id: string; name: string } | undefined }) {
  const curl = firstRequestCurl(window.location.origin, gate?.id);
  return (
    <div className="empty first-request">
      <h2>No requests yet: send one with curl</h2>
      <p className="muted">
        {gate ? (
          <>
            This calls your gate <strong>{gate.name}</strong>. Set <code>GATEHOUSE_API_KEY</code> to the API
            key you were shown at sign-up.
          </>
        ) : (
          <>
            First <Link href="/gates/new">create a gate</Link>, then put its id in the command. Set{' '}
            <code>GATEHOUSE_API_KEY</code> to the API key you were shown at sign-up.
          </>
        )}
      </p>
      <figure className="code-block" aria-label="Example request">
        <pre className="mono">{curl}</pre>
        <CopyButton copy={copyText(curl)} label="Copy command" />
      </figure>
      <p className="muted small">Totals, charts and the request itself appear here once it is logged.</p>
    </div>
  );
}
