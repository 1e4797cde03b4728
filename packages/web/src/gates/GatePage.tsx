import type { GatePatch } from '@gatehouse/server/rules/gate';
import { readFragment } from 'gql.tada';
import { useEffect, useMemo, useRef, useState } from 'react';
import { type FieldErrors, useForm } from 'react-hook-form';
import { useMutation, useQuery } from 'urql';
import { Link, useLocation, useParams, useSearchParams } from 'wouter';
import { showMutationErrors } from '../forms/formErrors.ts';
import { graphql, type ResultOf } from '../graphql.ts';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { DangerZone } from './DangerZone.tsx';
import { GateEditForm } from './GateEditForm.tsx';
import {
  FIELD_ORDER,
  type GateTab,
  gateEditResolver,
  gateToForm,
  type StoredGateSettings,
  tabFromSearch,
  tabOfField,
} from './gateEdit.ts';
import { fieldOfIssue, type GateFormField, type GateFormValues } from './gateForm.ts';
import { SpendingAlert, SpendingBadge } from './SpendingNotice.tsx';
import { formatUsd, formatUtc, periodReset } from './spending.ts';
import { useTaskModels } from './useTaskModels.ts';

const GateDetail = graphql(`
  fragment GateDetail on Gate {
    id
    name
    description
    autoEnhanceDescription
    taskType
    taskSubtype
    tags
    model
    routingStrategy
    fallbackModels
    systemPrompt
    temperature
    maxTokens
    topP
    allowOverrides
    costWeight
    latencyWeight
    qualityWeight
    analysisMethod
    maxCostPer1kTokens
    maxLatencyMs
    reanalysisPeriod
    autoApplyRecommendations
    responseFormatEnabled
    responseFormatType
    responseFormatSchema
    spendingLimit
    spendingLimitPeriod
    spendingEnforcement
    spendingCurrent
    spendingPeriodStart
    spendingResetsAt
    spendingStatus
    createdAt
    updatedAt
  }
`);

const GatePageQuery = graphql(
  `
  query GatePage($id: ID!) {
    gate(id: $id) {
      ...GateDetail
    }
  }
`,
  [GateDetail],
);

const UpdateGateMutation = graphql(
  `
  mutation UpdateGate($id: ID!, $input: GateInput!) {
    updateGate(id: $id, input: $input) {
      __typename
      ... on MutationUpdateGateSuccess {
        data {
          ...GateDetail
        }
      }
      ... on Error {
        message
      }
      ... on ValidationError {
        issues {
          path
          message
        }
      }
      ... on ConflictError {
        field
      }
    }
  }
`,
  [GateDetail],
);

const DeleteGateMutation = graphql(`
  mutation DeleteGate($id: ID!) {
    deleteGate(id: $id) {
      __typename
      ... on MutationDeleteGateSuccess {
        data
      }
      ... on Error {
        message
      }
    }
  }
`);

type Gate = ResultOf<typeof GateDetail>;

/** The gate the URL names, in tabs (`?tab=routing`); loads it, then hands it to the editor. */
export function GatePage() {
  const { id = '' } = useParams<{ id: string }>();
  const [search, setSearch] = useSearchParams();
  const tab = tabFromSearch(search.get('tab'));
  // Spending moves with every request through the gate: ask the server each time the page opens.
  const [{ data, fetching, error }, refetch] = useQuery({
    query: GatePageQuery,
    variables: { id },
    requestPolicy: 'cache-and-network',
  });
  const gate = data?.gate ? readFragment(GateDetail, data.gate) : null;

  if (!data && fetching) return <Loading what="the gate" />;
  if (error && !data) {
    return (
      <section className="page">
        <ErrorBanner error={error} onRetry={() => refetch({ requestPolicy: 'network-only' })} />
      </section>
    );
  }
  if (!gate) {
    return (
      <section className="page">
        <p className="breadcrumb">
          <Link href="/gates">Gates</Link>
        </p>
        <h1>Gate not found</h1>
        <p>
          None of your gates has this id; it may have been deleted.{' '}
          <Link href="/gates">Back to your gates</Link>.
        </p>
      </section>
    );
  }
  return (
    <GateEditor
      key={gate.id}
      gate={gate}
      tab={tab}
      onTabChange={(next) => setSearch({ tab: next }, { replace: true })}
    />
  );
}

/** The editing container: the form, its save as a patch, server errors to their fields and tabs, deletion. */
function GateEditor({
  gate,
  tab,
  onTabChange,
}: {
  gate: Gate;
  tab: GateTab;
  onTabChange: (tab: GateTab) => void;
}) {
  // What the form was last loaded from: the patch is what differs from it.
  const baseline = useRef<{ gate: StoredGateSettings; values: GateFormValues }>({
    gate,
    values: gateToForm(gate),
  });
  const resolver = useMemo(
    () =>
      gateEditResolver(
        () => baseline.current.values,
        () => baseline.current.gate,
      ),
    [],
  );
  const form = useForm<GateFormValues, unknown, GatePatch>({
    defaultValues: baseline.current.values,
    resolver,
  });
  const { models, modelsState } = useTaskModels(form);
  const [, updateGate] = useMutation(UpdateGateMutation);
  const [, deleteGate] = useMutation(DeleteGateMutation);
  const [, navigate] = useLocation();
  const [savedNotice, setSavedNotice] = useState<string | null>(null);
  const [focusAfterTab, setFocusAfterTab] = useState<GateFormField | null>(null);

  // A field on another tab can take focus only once its tab shows.
  useEffect(() => {
    if (focusAfterTab && tabOfField(focusAfterTab) === tab) {
      form.setFocus(focusAfterTab);
      setFocusAfterTab(null);
    }
  }, [focusAfterTab, tab, form]);

  const showField = (field: GateFormField) => {
    const fieldTab = tabOfField(field);
    if (fieldTab && fieldTab !== tab) onTabChange(fieldTab);
    setFocusAfterTab(field);
  };

  const onInvalid = (errors: FieldErrors<GateFormValues>) => {
    setSavedNotice(null);
    const first = FIELD_ORDER.find((field) => errors[field]);
    if (first) showField(firstErrorPath(first, errors));
  };

  const onSubmit = async (patch: GatePatch) => {
    setSavedNotice(null);
    if (Object.keys(patch).length === 0) {
      setSavedNotice('Nothing to save: no setting changed.');
      return;
    }
    const result = await updateGate({ id: gate.id, input: patch });
    const outcome = result.data?.updateGate;
    if (outcome?.__typename === 'MutationUpdateGateSuccess') {
      const saved = readFragment(GateDetail, outcome.data);
      baseline.current = { gate: saved, values: gateToForm(saved) };
      form.reset(baseline.current.values);
      setSavedNotice(
        `Saved ${Object.keys(patch).length === 1 ? 'the change' : `${Object.keys(patch).length} changes`}.`,
      );
      return;
    }
    const first = showMutationErrors(form, outcome, {
      fieldOf: fieldOfIssue,
      unanswered: result.error?.graphQLErrors[0]?.message ?? 'The gate could not be saved; try again.',
    });
    if (first) showField(first);
  };

  const onDelete = async (): Promise<string | null> => {
    const result = await deleteGate({ id: gate.id }, { additionalTypenames: ['Gate'] });
    const outcome = result.data?.deleteGate;
    if (outcome?.__typename === 'MutationDeleteGateSuccess') {
      navigate('/gates', { replace: true });
      return null;
    }
    return (
      outcome?.message ??
      result.error?.graphQLErrors[0]?.message ??
      'The gate could not be deleted; try again.'
    );
  };

  return (
    <section className="page narrow-wide">
      <p className="breadcrumb">
        <Link href="/gates">Gates</Link> / {gate.name}
      </p>
      <div className="page-header">
        <div>
          <h1>
            {gate.name}
            <span className="title-status">
              <SpendingBadge gate={gate} />
            </span>
          </h1>
          <p className="muted small">
            Gate id <span className="mono">{gate.id}</span> · {gate.taskType} · {gate.model}
          </p>
        </div>
      </div>
      <SpendingAlert gate={gate} onEditLimit={() => showField('spendingLimit')} />
      <GateEditForm
        form={form}
        onSubmit={onSubmit}
        onInvalid={onInvalid}
        onDiscard={() => {
          form.reset(baseline.current.values);
          setSavedNotice(null);
        }}
        tab={tab}
        onTabChange={onTabChange}
        models={models}
        modelsState={modelsState}
        savedNotice={savedNotice}
        spendingNow={<SpendingNow gate={gate} />}
        connections={<Connections />}
        dangerZone={<DangerZone gateName={gate.name} onDelete={onDelete} />}
      />
    </section>
  );
}

/** "fallbackModels" names a list: the field to show is the first row with an error. */
function firstErrorPath(field: keyof GateFormValues, errors: FieldErrors<GateFormValues>): GateFormField {
  if (field === 'fallbackModels' && Array.isArray(errors.fallbackModels)) {
    const row = errors.fallbackModels.findIndex(Boolean);
    if (row >= 0) return `fallbackModels.${row}.model`;
  }
  return field;
}

function SpendingNow({ gate }: { gate: Gate }) {
  return (
    <dl className="summary-list" aria-label="Spending this period">
      <div>
        <dt>Spent this period</dt>
        <dd>{formatUsd(gate.spendingCurrent)}</dd>
      </div>
      <div>
        <dt>Period started</dt>
        <dd>{formatUtc(gate.spendingPeriodStart)}</dd>
      </div>
      <div>
        <dt>Resets</dt>
        <dd>{formatUtc(periodReset(gate))}</dd>
      </div>
      <div>
        <dt>Status</dt>
        <dd>
          <SpendingBadge gate={gate} />
        </dd>
      </div>
    </dl>
  );
}

function Connections() {
  return (
    <section className="connections">
      <h2>Used by agent gates</h2>
      <p className="empty-line">No agent gate uses this gate as a sub-gate.</p>
      <p className="muted">
        An agent gate lists its sub-gates on its own Sub-Gates tab, and they would show here with a Detach
        action. This Gatehouse has no agent gates yet, so there is nothing to list.
      </p>
    </section>
  );
}
