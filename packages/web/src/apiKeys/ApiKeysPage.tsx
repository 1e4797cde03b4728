import { useMemo, useState } from 'react';
import { useForm } from 'react-hook-form';
import { useMutation, useQuery } from 'urql';
import { Link } from 'wouter';
import { sentence, showMutationErrors } from '../forms/formErrors.ts';
import { MutationErrorFields } from '../forms/mutationErrors.ts';
import { graphql, type ResultOf } from '../graphql.ts';
import { formatUtc } from '../logs/format.ts';
import { logsSearch } from '../logs/logSearch.ts';
import { ApiKeyReveal } from '../session/ApiKeyReveal.tsx';
import { AskButton, ConfirmRow, useConfirmation } from '../ui/Confirm.tsx';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { TableWrap } from '../ui/TableWrap.tsx';
import { mayDrop, SECRET_QUESTION, useUnsavedChanges } from '../ui/unsavedChanges.ts';
import { useTitle } from '../ui/useTitle.ts';
import {
  type ApiKeyLimitsValues,
  limitsInput,
  limitsResolver,
  limitsText,
  limitsToForm,
  type NewApiKey,
  newApiKeyInput,
  newApiKeyResolver,
  noLimits,
} from './apiKeyForm.ts';
import { CreateApiKeyForm, LimitFields } from './CreateApiKeyForm.tsx';
import { KeySettingsForm } from './KeySettingsForm.tsx';
import {
  KEY_SETTINGS_FIELDS,
  type KeySettingsValues,
  keySettingsResolver,
  keySettingsToForm,
  keySettingsToGraphQL,
  scopeText,
  spendingText,
} from './keySettings.ts';
import { RollKeyForm } from './RollKeyForm.tsx';

const ApiKeysQuery = graphql(`
  query ApiKeys {
    apiKeys {
      id
      name
      prefix
      createdAt
      lastUsedAt
      revokedAt
      rateLimitRpm
      rateLimitTpm
      expiresAt
      previousKeyExpiresAt
      spendingLimit
      spendingLimitPeriod
      spendingEnforcement
      spendingCurrent
      spendingStatus
      allowedGates
      allowedTaskTypes
    }
  }
`);

/** The account's gates, to scope a key to (an operation's lists may hold 500 rows). */
const ApiKeyGatesQuery = graphql(`
  query ApiKeyGates {
    gates(first: 200) {
      edges {
        node {
          id
          name
        }
      }
    }
  }
`);

const UpdateApiKeySettingsMutation = graphql(
  `
  mutation UpdateApiKeySettings($id: ID!, $input: ApiKeyInput!) {
    updateApiKey(id: $id, input: $input) {
      __typename
      ... on MutationUpdateApiKeySuccess {
        data {
          id
          expiresAt
          spendingLimit
          spendingLimitPeriod
          spendingEnforcement
          spendingCurrent
          spendingStatus
          allowedGates
          allowedTaskTypes
        }
      }
      ...MutationErrorFields
    }
  }
`,
  [MutationErrorFields],
);

const RollApiKeyMutation = graphql(
  `
  mutation RollApiKey($id: ID!, $graceSeconds: Int!) {
    rollApiKey(id: $id, graceSeconds: $graceSeconds) {
      __typename
      ... on MutationRollApiKeySuccess {
        data {
          key
          apiKey {
            id
            name
            prefix
            previousKeyExpiresAt
          }
        }
      }
      ...MutationErrorFields
    }
  }
`,
  [MutationErrorFields],
);

const CreateApiKeyMutation = graphql(
  `
  mutation CreateApiKey($name: String!, $rateLimitRpm: Int, $rateLimitTpm: Int) {
    createApiKey(name: $name, rateLimitRpm: $rateLimitRpm, rateLimitTpm: $rateLimitTpm) {
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

const UpdateApiKeyLimitsMutation = graphql(
  `
  mutation UpdateApiKeyLimits($id: ID!, $input: ApiKeyInput!) {
    updateApiKey(id: $id, input: $input) {
      __typename
      ... on MutationUpdateApiKeySuccess {
        data {
          id
          rateLimitRpm
          rateLimitTpm
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

type Issue = { path: string; message: string };

/** Saves a key's limits: null when saved, else the issues to show (on their fields, or above). */
type SaveLimits = (id: string, values: ApiKeyLimitsValues) => Promise<Issue[] | null>;

/** What a row may do to its key, each answering null when done or what went wrong. */
type RowActions = {
  onRevoke: (id: string) => Promise<string | null>;
  onSaveLimits: SaveLimits;
  onSaveSettings: (id: string, values: KeySettingsValues) => Promise<Issue[] | null>;
  onRoll: (id: string, graceSeconds: number) => Promise<string | null>;
  gates: readonly { id: string; name: string }[];
  gateNames: ReadonlyMap<string, string>;
};

/**
 * The account's API keys: issue one (its secret shown once), see when each was used, set its
 * rate limits, revoke.
 */
export function ApiKeysPage() {
  useTitle('API keys');
  // An empty answer names no ApiKey type: say it, so issuing or revoking a key refreshes the list.
  const context = useMemo(() => ({ additionalTypenames: ['ApiKey'] }), []);
  const [{ data, fetching, error }, refetch] = useQuery({
    query: ApiKeysQuery,
    context,
    requestPolicy: 'cache-and-network',
  });
  const [, createApiKey] = useMutation(CreateApiKeyMutation);
  const [, revokeApiKey] = useMutation(RevokeApiKeyMutation);
  const [, updateApiKey] = useMutation(UpdateApiKeyLimitsMutation);
  const [, updateSettings] = useMutation(UpdateApiKeySettingsMutation);
  const [, rollApiKey] = useMutation(RollApiKeyMutation);
  const [{ data: gateData }] = useQuery({ query: ApiKeyGatesQuery });
  const form = useForm<NewApiKey>({ defaultValues: { name: '', ...noLimits }, resolver: newApiKeyResolver });
  const [issued, setIssued] = useState<{ key: string; name: string } | null>(null);
  // Until "I have copied the key": leaving would lose the secret for good.
  useUnsavedChanges(issued !== null, SECRET_QUESTION);
  useUnsavedChanges(form.formState.isDirty);

  const onCreate = async (values: NewApiKey) => {
    const result = await createApiKey(newApiKeyInput(values), context);
    const outcome = result.data?.createApiKey;
    if (outcome?.__typename === 'MutationCreateApiKeySuccess') {
      setIssued({ key: outcome.data.key, name: outcome.data.apiKey.name });
      form.reset();
      return;
    }
    showMutationErrors(form, outcome, {
      fieldOf: (issue) =>
        issue.path === 'name' || issue.path === 'rateLimitRpm' || issue.path === 'rateLimitTpm'
          ? { field: issue.path, message: sentence(issue.message) }
          : null,
      unanswered: result.error?.message ?? 'The key could not be created; try again.',
    });
  };

  const onSaveLimits: SaveLimits = async (id, values) => {
    const result = await updateApiKey({ id, input: limitsInput(values) }, context);
    const outcome = result.data?.updateApiKey;
    if (outcome?.__typename === 'MutationUpdateApiKeySuccess') return null;
    if (outcome?.__typename === 'ValidationError') return [...(outcome.issues ?? [])];
    return [
      {
        path: '',
        message: outcome?.message ?? result.error?.message ?? 'The limits could not be saved; try again.',
      },
    ];
  };

  const onSaveSettings = async (id: string, values: KeySettingsValues): Promise<Issue[] | null> => {
    const result = await updateSettings({ id, input: keySettingsToGraphQL(values) }, context);
    const outcome = result.data?.updateApiKey;
    if (outcome?.__typename === 'MutationUpdateApiKeySuccess') return null;
    if (outcome?.__typename === 'ValidationError') return [...(outcome.issues ?? [])];
    return [
      {
        path: '',
        message: outcome?.message ?? result.error?.message ?? 'The settings could not be saved; try again.',
      },
    ];
  };

  const onRoll = async (id: string, graceSeconds: number): Promise<string | null> => {
    const result = await rollApiKey({ id, graceSeconds }, context);
    const outcome = result.data?.rollApiKey;
    if (outcome?.__typename === 'MutationRollApiKeySuccess') {
      setIssued({ key: outcome.data.key, name: outcome.data.apiKey.name });
      return null;
    }
    return outcome?.message ?? result.error?.message ?? 'The key could not be rolled; try again.';
  };

  const gates = useMemo(() => gateData?.gates.edges.map((e) => e.node) ?? [], [gateData]);
  const gateNames = useMemo(() => new Map(gates.map((g) => [g.id, g.name])), [gates]);

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
      {keys && keys.length > 0 && (
        <ApiKeysTable
          keys={keys}
          actions={{ onRevoke, onSaveLimits, onSaveSettings, onRoll, gates, gateNames }}
        />
      )}
      <p className="muted small">Last use is recorded at most once a minute per key.</p>
    </section>
  );
}

const COLUMNS = 9;

function ApiKeysTable({ keys, actions }: { keys: ApiKeyRow[]; actions: RowActions }) {
  return (
    <TableWrap label="API keys">
      <table className="table">
        <thead>
          <tr>
            <th>Name</th>
            <th>Key</th>
            <th>Created</th>
            <th>Last used</th>
            <th>Status</th>
            <th>Rate limits</th>
            <th>Spending</th>
            <th>Scope</th>
            <th>
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((apiKey) => (
            <ApiKeyTableRow key={apiKey.id} apiKey={apiKey} actions={actions} />
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

/** The key's state: revoked, expired, expiring, or active (with the old secret's grace after a roll). */
function KeyStatus({ apiKey }: { apiKey: ApiKeyRow }) {
  if (apiKey.revokedAt) {
    return (
      <>
        <span className="badge danger">revoked</span>
        <div className="muted small">{formatUtc(apiKey.revokedAt)}</div>
      </>
    );
  }
  const expired = apiKey.expiresAt !== null && Date.parse(apiKey.expiresAt) <= Date.now();
  return (
    <>
      {expired ? <span className="badge danger">expired</span> : <span className="badge ok">active</span>}
      {apiKey.expiresAt && (
        <div className="muted small">
          {expired ? 'since' : 'expires'} {formatUtc(apiKey.expiresAt)}
        </div>
      )}
      {apiKey.previousKeyExpiresAt && (
        <div className="muted small">old secret until {formatUtc(apiKey.previousKeyExpiresAt)}</div>
      )}
    </>
  );
}

type Editing = 'limits' | 'settings' | 'roll' | null;

function ApiKeyTableRow({ apiKey, actions }: { apiKey: ApiKeyRow; actions: RowActions }) {
  const { onRevoke, onSaveLimits } = actions;
  const confirmation = useConfirmation(() => onRevoke(apiKey.id));
  const [editing, setEditingWhat] = useState<Editing>(null);
  const setEditing = (open: boolean) => setEditingWhat(open ? 'limits' : null);
  const revoked = apiKey.revokedAt !== null;

  return (
    <>
      <tr className={revoked ? 'revoked' : undefined}>
        <td data-label="Name" className="strong key-name">
          <Link
            href={`/logs${logsSearch({ filters: { apiKeyId: apiKey.id }, back: [] })}`}
            title="Its requests in the logs"
          >
            {apiKey.name}
          </Link>
        </td>
        <td data-label="Key" className="mono">
          {apiKey.prefix}…
        </td>
        <td data-label="Created">{formatUtc(apiKey.createdAt)}</td>
        <td data-label="Last used">
          {apiKey.lastUsedAt ? formatUtc(apiKey.lastUsedAt) : <span className="muted">Never</span>}
        </td>
        <td data-label="Status">
          <KeyStatus apiKey={apiKey} />
        </td>
        <td data-label="Rate limits">{limitsText(apiKey)}</td>
        <td data-label="Spending">
          {spendingText(apiKey)}
          {apiKey.spendingStatus === 'SUSPENDED' && <div className="badge danger">suspended</div>}
        </td>
        <td data-label="Scope">{scopeText(apiKey, actions.gateNames)}</td>
        <td className="row-actions">
          {!revoked && !editing && !confirmation.confirming && (
            <button
              type="button"
              className="button subtle"
              aria-label={`Edit the rate limits of ${apiKey.name}`}
              onClick={() => setEditing(true)}
            >
              Limits
            </button>
          )}
          {!revoked && !editing && !confirmation.confirming && (
            <button
              type="button"
              className="button subtle"
              aria-label={`Settings of ${apiKey.name}: spending limit, scope and expiry`}
              onClick={() => setEditingWhat('settings')}
            >
              Settings
            </button>
          )}
          {!revoked && !editing && !confirmation.confirming && (
            <button
              type="button"
              className="button subtle"
              aria-label={`Roll ${apiKey.name}`}
              onClick={() => setEditingWhat('roll')}
            >
              Roll
            </button>
          )}
          {!revoked && !editing && <AskButton confirmation={confirmation}>Revoke</AskButton>}
        </td>
      </tr>
      {editing === 'limits' && (
        <tr>
          <td colSpan={COLUMNS}>
            <LimitsForm apiKey={apiKey} onSave={onSaveLimits} onDone={() => setEditing(false)} />
          </td>
        </tr>
      )}
      {editing === 'settings' && (
        <tr>
          <td colSpan={COLUMNS}>
            <SettingsForm apiKey={apiKey} actions={actions} onDone={() => setEditing(false)} />
          </td>
        </tr>
      )}
      {editing === 'roll' && (
        <tr>
          <td colSpan={COLUMNS}>
            <RollKeyForm
              name={apiKey.name}
              idPrefix={`key-${apiKey.id}`}
              onRoll={async (grace) => {
                const problem = await actions.onRoll(apiKey.id, grace);
                if (!problem) setEditing(false);
                return problem;
              }}
              onCancel={() => setEditing(false)}
            />
          </td>
        </tr>
      )}
      <ConfirmRow
        columns={COLUMNS}
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

/** A key's spending limit, scope and expiry, saved together; closes once saved. */
function SettingsForm({
  apiKey,
  actions,
  onDone,
}: {
  apiKey: ApiKeyRow;
  actions: RowActions;
  onDone: () => void;
}) {
  const form = useForm<KeySettingsValues>({
    defaultValues: keySettingsToForm(apiKey),
    resolver: keySettingsResolver,
  });
  const dirty = form.formState.isDirty;
  useUnsavedChanges(dirty);
  const onSubmit = async (values: KeySettingsValues) => {
    const issues = await actions.onSaveSettings(apiKey.id, values);
    if (!issues) return onDone();
    for (const issue of issues) {
      const head = issue.path.split('.')[0] ?? '';
      const field = (KEY_SETTINGS_FIELDS as readonly string[]).includes(head)
        ? (head as (typeof KEY_SETTINGS_FIELDS)[number])
        : 'root.server';
      form.setError(field, { type: 'server', message: sentence(issue.message) });
    }
  };
  return (
    <KeySettingsForm
      form={form}
      onSubmit={onSubmit}
      onCancel={() => mayDrop(dirty) && onDone()}
      name={apiKey.name}
      idPrefix={`key-${apiKey.id}`}
      gates={actions.gates}
    />
  );
}

/** A key's requests and tokens per minute, saved together; closes once saved. */
function LimitsForm({
  apiKey,
  onSave,
  onDone,
}: {
  apiKey: ApiKeyRow;
  onSave: SaveLimits;
  onDone: () => void;
}) {
  const form = useForm<ApiKeyLimitsValues>({ defaultValues: limitsToForm(apiKey), resolver: limitsResolver });
  const { register, handleSubmit, formState, setError } = form;
  const { errors, isSubmitting, isDirty } = formState;
  useUnsavedChanges(isDirty);
  const onSubmit = async (values: ApiKeyLimitsValues) => {
    const issues = await onSave(apiKey.id, values);
    if (!issues) return onDone();
    for (const issue of issues) {
      const field =
        issue.path === 'rateLimitRpm' || issue.path === 'rateLimitTpm' ? issue.path : 'root.server';
      setError(field, { type: 'server', message: sentence(issue.message) });
    }
  };
  return (
    <form
      className="inline-form"
      aria-label={`Rate limits of ${apiKey.name}`}
      onSubmit={handleSubmit(onSubmit)}
      noValidate
    >
      {errors.root?.server && (
        <div className="banner error" role="alert">
          {errors.root.server.message}
        </div>
      )}
      <div className="row">
        <LimitFields register={register} errors={errors} idPrefix={`key-${apiKey.id}`} />
      </div>
      <div className="actions">
        <button
          type="button"
          className="button subtle"
          onClick={() => mayDrop(isDirty) && onDone()}
          disabled={isSubmitting}
        >
          Cancel
        </button>
        <button type="submit" className="button primary" disabled={isSubmitting}>
          {isSubmitting ? 'Saving…' : 'Save limits'}
        </button>
      </div>
    </form>
  );
}
