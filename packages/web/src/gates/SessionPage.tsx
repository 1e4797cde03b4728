import { useMutation, useQuery } from 'urql';
import { Link, useParams, useSearchParams } from 'wouter';
import { graphql } from '../graphql.ts';
import { formatCount, formatDateTime, formatMs, formatUsd } from '../logs/format.ts';
import { AskButton, ConfirmPanel, useConfirmation } from '../ui/Confirm.tsx';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { useTitle } from '../ui/useTitle.ts';
import { canEnd, SessionStatusBadge } from './sessionStatus.tsx';

const REQUESTS = 200;

const SessionPageQuery = graphql(`
  query SessionPage($gateId: ID!, $key: String!, $first: Int) {
    gate(id: $gateId) {
      id
      name
    }
    session(gateId: $gateId, key: $key) {
      id
      key
      status
      topic
      spendingCurrent
      sessionSpendingLimit
      requestCount
      refusedCount
      promptTokens
      completionTokens
      firstRequestAt
      lastRequestAt
      endedAt
      subGatesUsed
      toolsCalled
      requests(first: $first) {
        edges {
          node {
            id
            createdAt
            inferredAction
            modelUsed
            success
            statusCode
            errorMessage
            stepInput
            stepOutput
            toolCalls
            toolResults
            promptTokens
            completionTokens
            totalTokens
            costUsd
            latencyMs
          }
        }
        pageInfo {
          hasNextPage
        }
      }
    }
  }
`);

const EndSessionMutation = graphql(`
  mutation EndSession($gateId: ID!, $key: String!) {
    endSession(gateId: $gateId, key: $key) {
      __typename
      ... on MutationEndSessionSuccess {
        data {
          id
          status
          endedAt
        }
      }
      ... on Error {
        message
      }
    }
  }
`);

/** One session of an agent gate: its totals, its requests as a timeline, and End session. */
export function SessionPage() {
  const { id: gateId = '' } = useParams<{ id: string }>();
  const [search] = useSearchParams();
  const key = search.get('key') ?? '';
  const [{ data, fetching, error }, refetch] = useQuery({
    query: SessionPageQuery,
    variables: { gateId, key, first: REQUESTS },
    requestPolicy: 'cache-and-network',
    pause: key === '',
  });
  const reload = () => refetch({ requestPolicy: 'network-only' });
  useTitle(key ? `Session ${key}` : 'Session');

  const crumbs = (
    <p className="breadcrumb">
      <Link href="/gates">Gates</Link> /{' '}
      <Link href={`/gates/${gateId}?tab=sessions`}>{data?.gate?.name ?? 'Gate'}</Link> / Session
    </p>
  );
  if (!data && fetching) return <Loading what="the session" />;
  if (error && !data) {
    return (
      <section className="page">
        <ErrorBanner error={error} onRetry={reload} />
      </section>
    );
  }
  const session = data?.session;
  if (!session) {
    return (
      <section className="page">
        {crumbs}
        <h1>Session not found</h1>
        <p>This gate has no session with this id.</p>
      </section>
    );
  }
  const requests = session.requests.edges.map((edge) => edge.node);

  return (
    <section className="page narrow-wide">
      {crumbs}
      <div className="page-header">
        <div>
          <h1>
            Session <span className="mono">{session.key}</span>{' '}
            <span className="title-status">
              <SessionStatusBadge status={session.status} />
            </span>
          </h1>
          {session.topic && <p className="muted">{session.topic}</p>}
        </div>
        {canEnd(session.status) && <EndSession gateId={gateId} sessionKey={session.key} onEnded={reload} />}
      </div>
      <dl className="facts">
        <dt>Spent</dt>
        <dd>
          {formatUsd(session.spendingCurrent)}
          {session.sessionSpendingLimit === null
            ? ' (no session limit)'
            : ` of ${formatUsd(session.sessionSpendingLimit)}`}
        </dd>
        <dt>Requests</dt>
        <dd>
          {formatCount(session.requestCount + session.refusedCount)}
          {session.refusedCount > 0 &&
            ` (${formatCount(session.refusedCount)} refused before reaching a provider)`}
        </dd>
        <dt>Tokens</dt>
        <dd>
          {formatCount(session.promptTokens)} in · {formatCount(session.completionTokens)} out
        </dd>
        <dt>First request</dt>
        <dd>{formatDateTime(session.firstRequestAt)}</dd>
        <dt>Last activity</dt>
        <dd>{formatDateTime(session.lastRequestAt)}</dd>
        {session.endedAt && (
          <>
            <dt>Ended</dt>
            <dd>{formatDateTime(session.endedAt)}</dd>
          </>
        )}
        {session.subGatesUsed.length > 0 && (
          <>
            <dt>Sub-gates used</dt>
            <dd>{session.subGatesUsed.join(', ')}</dd>
          </>
        )}
        {session.toolsCalled.length > 0 && (
          <>
            <dt>Tools called</dt>
            <dd>{session.toolsCalled.join(', ')}</dd>
          </>
        )}
      </dl>

      <h2>Timeline</h2>
      {requests.length === 0 && <p className="empty-line">No request is logged for this session.</p>}
      <ol className="timeline" aria-label="Session requests">
        {requests.map((request, index) => (
          <li key={request.id} className="timeline-item">
            <div className="timeline-head">
              <strong>Request {index + 1}</strong> · {formatDateTime(request.createdAt)} ·{' '}
              {request.inferredAction ? (
                <>
                  action <span className="mono">{request.inferredAction}</span>
                </>
              ) : (
                <span className="muted">no action</span>
              )}{' '}
              · {request.modelUsed ?? <span className="muted">no model</span>} ·{' '}
              <span className={request.success ? 'badge ok' : 'badge danger'}>
                {request.success ? 'ok' : `failed ${request.statusCode}`}
              </span>
            </div>
            <p className="muted small">
              {formatCount(request.totalTokens)} tokens ({formatCount(request.promptTokens)} in,{' '}
              {formatCount(request.completionTokens)} out) · {formatUsd(request.costUsd)} ·{' '}
              {formatMs(request.latencyMs)} · <Link href={`/logs/${request.id}`}>log entry</Link>
            </p>
            {request.errorMessage && <p className="field-error">{request.errorMessage}</p>}
            <StepText label="Input" text={request.stepInput} />
            <StepText label="Output" text={request.stepOutput} />
            {hasJson(request.toolCalls) && (
              <details>
                <summary>Tool calls</summary>
                <pre className="mono">{JSON.stringify(request.toolCalls, null, 2)}</pre>
              </details>
            )}
            {hasJson(request.toolResults) && (
              <details>
                <summary>Tool results</summary>
                <pre className="mono">{JSON.stringify(request.toolResults, null, 2)}</pre>
              </details>
            )}
          </li>
        ))}
      </ol>
      {session.requests.pageInfo.hasNextPage && (
        <p className="muted">The first {REQUESTS} requests are shown; the logs hold the rest.</p>
      )}
    </section>
  );
}

/** What went into or came out of a step, as text; nothing when the step has none. */
function StepText({ label, text }: { label: string; text: string | null }) {
  if (text === null) return null;
  return (
    <div className="step-text">
      <span className="muted small">{label}</span>
      <pre className="wrap">{text}</pre>
    </div>
  );
}

const hasJson = (value: unknown) =>
  value !== null && value !== undefined && !(Array.isArray(value) && value.length === 0);

/** Ends the session after a confirmation; its next request is refused as a runaway. */
function EndSession({
  gateId,
  sessionKey,
  onEnded,
}: {
  gateId: string;
  sessionKey: string;
  onEnded: () => void;
}) {
  const [, endSession] = useMutation(EndSessionMutation);
  const confirmation = useConfirmation(async () => {
    const result = await endSession({ gateId, key: sessionKey });
    const outcome = result.data?.endSession;
    if (outcome?.__typename === 'MutationEndSessionSuccess') {
      onEnded();
      return null;
    }
    return (
      (outcome && 'message' in outcome ? outcome.message : undefined) ??
      result.error?.graphQLErrors[0]?.message ??
      'The session could not be ended; try again.'
    );
  });

  return (
    <>
      <AskButton confirmation={confirmation}>End session</AskButton>
      <ConfirmPanel
        confirmation={confirmation}
        label="Confirm end session"
        question="End this session? It becomes completed; a later request with its id still passes, and marks it runaway."
        action="Yes, end it"
        busyAction="Ending…"
      />
    </>
  );
}
