import { apiKeyCreateSchema } from '@gatehouse/rules/account';
import { zodResolver } from '@hookform/resolvers/zod';
import { useMemo, useState } from 'react';
import { useForm } from 'react-hook-form';
import { useMutation, useQuery } from 'urql';
import { sentence, showMutationErrors } from '../forms/formErrors.ts';
import { MutationErrorFields } from '../forms/mutationErrors.ts';
import { graphql, type ResultOf } from '../graphql.ts';
import { formatUtc } from '../logs/format.ts';
import { ApiKeyReveal } from '../session/ApiKeyReveal.tsx';
import { AskButton, ConfirmRow, useConfirmation } from '../ui/Confirm.tsx';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { CreateApiKeyForm, type NewApiKey } from './CreateApiKeyForm.tsx';

const ApiKeysQuery = graphql(`
  query ApiKeys {
    apiKeys {
      id
      name
      prefix
      createdAt
      lastUsedAt
      revokedAt
    }
  }
`);

const CreateApiKeyMutation = graphql(
  `
  mutation CreateApiKey($name: String!) {
    createApiKey(name: $name) {
      __typename
      ... on MutationCreateApiKeySuccess {
        data {
          key
          apiKey {
            id
            name
          }
        }
      }
      ...MutationErrorFields
    }
  }
`,
  [MutationErrorFields],
);

const RevokeApiKeyMutation = graphql(
  `
  mutation RevokeApiKey($id: ID!) {
    revokeApiKey(id: $id) {
      __typename
      ... on MutationRevokeApiKeySuccess {
        data {
          id
          revokedAt
        }
      }
      ...MutationErrorFields
    }
  }
`,
  [MutationErrorFields],
);

type ApiKeyRow = ResultOf<typeof ApiKeysQuery>['apiKeys'][number];

/** The account's API keys: issue one (its secret shown once), see when each was used, revoke. */
export function ApiKeysPage() {
  // An empty answer names no ApiKey type: say it, so issuing or revoking a key refreshes the list.
  const context = useMemo(() => ({ additionalTypenames: ['ApiKey'] }), []);
  const [{ data, fetching, error }, refetch] = useQuery({
    query: ApiKeysQuery,
    context,
    requestPolicy: 'cache-and-network',
  });
  const [, createApiKey] = useMutation(CreateApiKeyMutation);
  const [, revokeApiKey] = useMutation(RevokeApiKeyMutation);
  const form = useForm<NewApiKey>({ defaultValues: { name: '' }, resolver: zodResolver(apiKeyCreateSchema) });
  const [issued, setIssued] = useState<{ key: string; name: string } | null>(null);

  const onCreate = async ({ name }: NewApiKey) => {
    const result = await createApiKey({ name }, context);
    const outcome = result.data?.createApiKey;
    if (outcome?.__typename === 'MutationCreateApiKeySuccess') {
      setIssued({ key: outcome.data.key, name: outcome.data.apiKey.name });
      form.reset();
      return;
    }
    showMutationErrors(form, outcome, {
      fieldOf: (issue) =>
        issue.path === 'name' ? { field: 'name', message: sentence(issue.message) } : null,
      unanswered: result.error?.message ?? 'The key could not be created; try again.',
    });
  };

  const onRevoke = async (id: string): Promise<string | null> => {
    const result = await revokeApiKey({ id }, context);
    const outcome = result.data?.revokeApiKey;
    if (outcome?.__typename === 'MutationRevokeApiKeySuccess') return null;
    return outcome?.message ?? result.error?.message ?? 'The key could not be revoked; try again.';
  };

  const keys = data?.apiKeys;
  return (
    <section className="page">
      <div className="page-header">
        <div>
          <h1>API keys</h1>
          <p className="muted">
            Applications send a key as <code>Authorization: Bearer &lt;key&gt;</code> to call your gates and
            the API. Revoke a key you no longer trust: requests with it are refused (401) at once.
          </p>
        </div>
      </div>

      <div className="card new-key">
        {issued ? (
          <>
            <h2>Your new key: copy it now, you will not see it again</h2>
            <ApiKeyReveal
              apiKey={issued.key}
              name={issued.name}
              continueLabel="I have copied the key"
              onContinue={() => setIssued(null)}
            />
          </>
        ) : (
          <CreateApiKeyForm form={form} onSubmit={onCreate} />
        )}
      </div>

      {error && !data && (
        <ErrorBanner error={error} onRetry={() => refetch({ requestPolicy: 'network-only' })} />
      )}
      {!data && fetching && <Loading what="API keys" />}
      {keys && keys.length === 0 && (
        <div className="empty">
          <h2>No API keys</h2>
          <p className="muted">Create one above to call your gates.</p>
        </div>
      )}
      {keys && keys.length > 0 && <ApiKeysTable keys={keys} onRevoke={onRevoke} />}
      <p className="muted small">Last use is recorded at most once a minute per key.</p>
    </section>
  );
}

function ApiKeysTable({
  keys,
  onRevoke,
}: {
  keys: ApiKeyRow[];
  onRevoke: (id: string) => Promise<string | null>;
}) {
  return (
    <div className="table-wrap">
      <table className="table">
        <thead>
          <tr>
            <th>Name</th>
            <th>Key</th>
            <th>Created</th>
            <th>Last used</th>
            <th>Status</th>
            <th>
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((apiKey) => (
            <ApiKeyTableRow key={apiKey.id} apiKey={apiKey} onRevoke={onRevoke} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ApiKeyTableRow({
  apiKey,
  onRevoke,
}: {
  apiKey: ApiKeyRow;
  onRevoke: (id: string) => Promise<string | null>;
}) {
  const confirmation = useConfirmation(() => onRevoke(apiKey.id));
  const revoked = apiKey.revokedAt !== null;

  return (
    <>
      <tr className={revoked ? 'revoked' : undefined}>
        <td className="strong key-name">{apiKey.name}</td>
        <td className="mono">{apiKey.prefix}…</td>
        <td>{formatUtc(apiKey.createdAt)}</td>
        <td>{apiKey.lastUsedAt ? formatUtc(apiKey.lastUsedAt) : <span className="muted">Never</span>}</td>
        <td>
          {revoked && apiKey.revokedAt ? (
            <>
              <span className="badge danger">revoked</span>
              <div className="muted small">{formatUtc(apiKey.revokedAt)}</div>
            </>
          ) : (
            <span className="badge ok">active</span>
          )}
        </td>
        <td className="row-actions">
          {!revoked && <AskButton confirmation={confirmation}>Revoke</AskButton>}
        </td>
      </tr>
      <ConfirmRow
        columns={6}
        confirmation={confirmation}
        label={`Revoke ${apiKey.name}`}
        question={
          <>
            Revoke <strong>{apiKey.name}</strong> ({apiKey.prefix}…)? Every request with it gets 401 from now
            on. This cannot be undone.
          </>
        }
        action="Revoke key"
        busyAction="Revoking…"
      />
    </>
  );
}
