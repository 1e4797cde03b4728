import { readFragment } from 'gql.tada';
import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../graphql.ts';
import { formatDateTime } from '../logs/format.ts';
import { AskButton, ConfirmPanel, useConfirmation } from '../ui/Confirm.tsx';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { GateDetail, type GateDetailData } from './gateDetail.ts';
import { changeWho, readableValue, TEXT_PREVIEW } from './history.ts';

const PAGE = 50;
const MAX_PAGE = 200;

const GateHistoryQuery = graphql(`
  query GateHistory($id: ID!, $first: Int) {
    gate(id: $id) {
      id
      history(first: $first) {
        edges {
          node {
            id
            version
            changedBy
            actorEmail
            rolledBackToVersion
            changes {
              field
              from
              to
            }
            createdAt
          }
        }
        pageInfo {
          hasNextPage
        }
      }
    }
  }
`);

const RollbackGateMutation = graphql(
  `
  mutation RollbackGate($id: ID!, $versionId: ID!) {
    rollbackGate(id: $id, versionId: $versionId) {
      __typename
      ... on MutationRollbackGateSuccess {
        data {
          ...GateDetail
        }
      }
      ... on Error {
        message
      }
    }
  }
`,
  [GateDetail],
);

type VersionNode = NonNullable<
  NonNullable<ReturnType<typeof useGateHistory>['data']>['gate']
>['history']['edges'][number]['node'];

function useGateHistory(gateId: string, first: number, active: boolean) {
  const [result, refetch] = useQuery({
    query: GateHistoryQuery,
    variables: { id: gateId, first },
    requestPolicy: 'cache-and-network',
    pause: !active,
  });
  return { ...result, refetch };
}

/**
 * The History tab: the gate's versions newest first, who made each and what it changed, and a
 * rollback to any but the current one. A rollback hands the restored gate to `onRolledBack` (the
 * form shows it) and reloads the list, where it is the newest version.
 */
export function History({
  gateId,
  active,
  onRolledBack,
}: {
  gateId: string;
  active: boolean;
  onRolledBack: (gate: GateDetailData) => void;
}) {
  const [first, setFirst] = useState(PAGE);
  const { data, fetching, error, refetch } = useGateHistory(gateId, first, active);
  const [, rollbackGate] = useMutation(RollbackGateMutation);
  const versions = data?.gate?.history.edges.map((edge) => edge.node) ?? [];
  const hasMore = data?.gate?.history.pageInfo.hasNextPage ?? false;

  const rollback = async (versionId: string): Promise<string | null> => {
    const result = await rollbackGate({ id: gateId, versionId });
    const outcome = result.data?.rollbackGate;
    if (outcome?.__typename === 'MutationRollbackGateSuccess') {
      onRolledBack(readFragment(GateDetail, outcome.data));
      refetch({ requestPolicy: 'network-only' });
      return null;
    }
    return (
      (outcome && 'message' in outcome ? outcome.message : undefined) ??
      result.error?.graphQLErrors[0]?.message ??
      'The gate could not be rolled back; try again.'
    );
  };

  return (
    <section className="history">
      <h2>History</h2>
      <p className="muted">
        Every change of this gate’s settings, newest first: yours, the Architect’s and rollbacks. A rollback
        restores a version’s settings as a new version, so it can be undone in turn.
      </p>
      {!data && fetching && <Loading what="the history" />}
      {error && !data && (
        <ErrorBanner error={error} onRetry={() => refetch({ requestPolicy: 'network-only' })} />
      )}
      {data && versions.length === 0 && (
        <p className="empty-line">No version is recorded: the gate has not changed since history began.</p>
      )}
      {versions.length > 0 && (
        <ol className="version-list" aria-label="Versions">
          {versions.map((version, i) => (
            <VersionItem
              key={version.id}
              version={version}
              current={i === 0}
              onRollback={() => rollback(version.id)}
            />
          ))}
        </ol>
      )}
      {hasMore &&
        (first < MAX_PAGE ? (
          <button type="button" className="button subtle" onClick={() => setFirst(first + PAGE)}>
            Show older versions
          </button>
        ) : (
          <p className="muted">The {MAX_PAGE} newest versions are shown.</p>
        ))}
    </section>
  );
}

function VersionItem({
  version,
  current,
  onRollback,
}: {
  version: VersionNode;
  current: boolean;
  onRollback: () => Promise<string | null>;
}) {
  const confirmation = useConfirmation(onRollback);
  const created = version.version === 1 && version.changedBy === 'USER';
  return (
    <li className="version" aria-label={`Version ${version.version}`}>
      <div className="version-head">
        <strong>v{version.version}</strong>
        <span>{changeWho(version)}</span>
        <span className="muted small">{formatDateTime(String(version.createdAt))}</span>
        {current ? (
          <span className="badge">current</span>
        ) : (
          <AskButton confirmation={confirmation}>Roll back to this version</AskButton>
        )}
      </div>
      {version.changes.length === 0 ? (
        <p className="muted small">No setting changed.</p>
      ) : (
        <ul className="version-changes">
          {version.changes.map((change) => (
            <li key={change.field}>
              <span className="mono">{change.field}</span>:{' '}
              {created ? (
                <Value value={change.to} />
              ) : (
                <>
                  <Value value={change.from} /> → <Value value={change.to} />
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      <ConfirmPanel
        confirmation={confirmation}
        label="Confirm rollback"
        question={
          <>
            Roll back to v{version.version}? The gate’s settings become those of v{version.version}; unsaved
            edits in the form are dropped.
          </>
        }
        action="Yes, roll back"
        busyAction="Rolling back…"
      />
    </li>
  );
}

/** A setting's value in words; text longer than a line is cut, with a way to read all of it. */
function Value({ value }: { value: unknown }) {
  const [open, setOpen] = useState(false);
  const text = readableValue(value);
  if (text.length <= TEXT_PREVIEW) return <span className="version-value">{text}</span>;
  return (
    <span className="version-value">
      {open ? <span className="version-full">{text}</span> : `${text.slice(0, TEXT_PREVIEW)}…`}{' '}
      <button type="button" className="link-button" onClick={() => setOpen(!open)} aria-expanded={open}>
        {open ? 'Show less' : 'Show all'}
      </button>
    </span>
  );
}
