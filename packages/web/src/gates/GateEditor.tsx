import { type GatePatch, TASK_TYPES } from '@gatehouse/rules/gate';
import { readFragment } from 'gql.tada';
import { useEffect, useMemo, useRef, useState } from 'react';
import { type FieldErrors, type UseFormReturn, useForm } from 'react-hook-form';
import { useMutation } from 'urql';
import { Link, useLocation } from 'wouter';
import { showMutationErrors } from '../forms/formErrors.ts';
import { MutationErrorFields } from '../forms/mutationErrors.ts';
import { graphql } from '../graphql.ts';
import { fromEnum, gateToGraphQL } from '../graphqlEnums.ts';
import { AlertDeliveries } from '../settings/AlertDeliveries.tsx';
import { leaveWithoutAsking, useUnsavedChanges } from '../ui/unsavedChanges.ts';
import { ArchitectPanel } from './ArchitectPanel.tsx';
import { Connections } from './Connections.tsx';
import { DangerZone } from './DangerZone.tsx';
import { DescriptionSuggestion } from './DescriptionSuggestion.tsx';
import { GateEditForm } from './GateEditForm.tsx';
import { GateStatsStrip } from './GateStats.tsx';
import { GateDetail, type GateDetailData } from './gateDetail.ts';
import {
  FIELD_ORDER,
  type GateTab,
  gateEditResolver,
  gateToForm,
  type StoredGate,
  tabOfField,
} from './gateEdit.ts';
import { fieldOfIssue, type GateFormField, type GateFormValues } from './gateForm.ts';
import { History } from './History.tsx';
import { Sessions } from './Sessions.tsx';
import { SpendingAlert, SpendingBadge, SpendingNow } from './SpendingNotice.tsx';
import { SubGates } from './SubGates.tsx';
import { TryIt } from './TryIt.tsx';
import { UseGate } from './UseGate.tsx';
import { useRequestWorstCase } from './useRequestWorstCase.ts';
import { useTaskModels } from './useTaskModels.ts';

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
      ...MutationErrorFields
    }
  }
`,
  [GateDetail, MutationErrorFields],
);

const DeleteGateMutation = graphql(
  `
  mutation DeleteGate($id: ID!) {
    deleteGate(id: $id) {
      __typename
      ... on MutationDeleteGateSuccess {
        data
      }
      ...MutationErrorFields
    }
  }
`,
  [MutationErrorFields],
);

type Gate = GateDetailData;
type GateEditApi = UseFormReturn<GateFormValues, unknown, GatePatch>;

/** The editing container: the form, its save as a patch, server errors to their fields and tabs, deletion. */
export function GateEditor({
  gate,
  tab,
  onTabChange,
  created = false,
}: {
  gate: Gate;
  tab: GateTab;
  onTabChange: (tab: GateTab) => void;
  /** Just created: how to call it shows open. */
  created?: boolean;
}) {
  const { form, saved, rebase, discard } = useGateEditForm(gate);
  const { models, modelsState } = useTaskModels(form);
  // The figure follows unsaved edits; until the server answers for them, the saved gate's.
  const liveWorstCase = useRequestWorstCase(form);
  const [, updateGate] = useMutation(UpdateGateMutation);
  const onDelete = useDeleteGate(gate.id);
  const showField = useShowField(form, tab, onTabChange);
  const [savedNotice, setSavedNotice] = useState<string | null>(null);
  useUnsavedChanges(form.formState.isDirty);

  const onInvalid = (errors: FieldErrors<GateFormValues>) => {
    setSavedNotice(null);
    const first = FIELD_ORDER.find((field) => errors[field]);
    if (first) showField(firstErrorPath(first, errors));
  };

  /** Saves the patch; resolves to whether the gate was saved. */
  const save = async (patch: GatePatch): Promise<boolean> => {
    setSavedNotice(null);
    if (Object.keys(patch).length === 0) {
      setSavedNotice('Nothing to save: no setting changed.');
      return false;
    }
    const result = await updateGate({ id: gate.id, input: gateToGraphQL(patch) });
    const outcome = result.data?.updateGate;
    if (outcome?.__typename === 'MutationUpdateGateSuccess') {
      rebase(readFragment(GateDetail, outcome.data));
      setSavedNotice(
        `Saved ${Object.keys(patch).length === 1 ? 'the change' : `${Object.keys(patch).length} changes`}.`,
      );
      return true;
    }
    const first = showMutationErrors(form, outcome, {
      fieldOf: fieldOfIssue,
      unanswered: result.error?.graphQLErrors[0]?.message ?? 'The gate could not be saved; try again.',
    });
    if (first) showField(first);
    return false;
  };
  const onSubmit = async (patch: GatePatch) => {
    await save(patch);
  };

  // The Architect's recommendation goes through the form, so it is checked and saved as any edit is.
  const applyRecommendation = (model: string, fallbackModels: string[]) => {
    form.setValue('model', model, { shouldDirty: true });
    form.setValue(
      'fallbackModels',
      fallbackModels.map((fallback) => ({ model: fallback })),
      { shouldDirty: true },
    );
    return new Promise<boolean>((resolve) => {
      void form.handleSubmit(
        async (patch) => resolve(await save(patch)),
        (errors) => {
          onInvalid(errors);
          resolve(false);
        },
      )();
    });
  };

  return (
    <section className="page narrow-wide">
      <GateHeader gate={gate} />
      <UseGate gate={gate} created={created} />
      <GateStatsStrip gateId={gate.id} />
      <SpendingAlert gate={gate} onEditLimit={() => showField('spendingLimit')} />
      <GateEditForm
        form={form}
        onSubmit={onSubmit}
        onInvalid={onInvalid}
        onDiscard={() => {
          discard();
          setSavedNotice(null);
        }}
        tab={tab}
        onTabChange={onTabChange}
        models={models}
        modelsState={modelsState}
        architect={
          <ArchitectPanel
            gateId={gate.id}
            active={tab === 'routing'}
            current={saved}
            onApply={applyRecommendation}
          />
        }
        descriptionSuggestion={<DescriptionSuggestion form={form} />}
        savedNotice={savedNotice}
        spendingNow={
          <>
            <SpendingNow gate={gate} />
            <AlertDeliveries gateId={gate.id} />
          </>
        }
        worstCaseUsd={liveWorstCase === undefined ? gate.requestWorstCaseUsd : liveWorstCase}
        tryIt={<TryIt gateId={gate.id} taskType={fromEnum(TASK_TYPES, gate.taskType)} />}
        agent={gate.gateType === 'AGENT'}
        subGates={<SubGates gateId={gate.id} active={tab === 'subgates'} />}
        sessions={<Sessions gateId={gate.id} active={tab === 'sessions'} />}
        connections={<Connections gateId={gate.id} active={tab === 'connections'} />}
        history={<History gateId={gate.id} active={tab === 'history'} onRolledBack={rebase} />}
        dangerZone={<DangerZone gateName={gate.name} onDelete={onDelete} />}
      />
    </section>
  );
}

/**
 * The form over the gate as last loaded or saved (the baseline): the patch is what differs from it.
 * `rebase` makes a saved gate the baseline and shows it; `discard` goes back to the baseline.
 */
function useGateEditForm(gate: StoredGate) {
  const baseline = useRef<{ gate: StoredGate; values: GateFormValues }>({
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
  // The baseline as state too, for what shows the gate as stored (the Architect's Apply).
  const [saved, setSaved] = useState(gate);
  const rebase = (stored: StoredGate) => {
    baseline.current = { gate: stored, values: gateToForm(stored) };
    setSaved(stored);
    form.reset(baseline.current.values);
  };
  const discard = () => form.reset(baseline.current.values);
  return { form, saved, rebase, discard };
}

/** Brings a field into view: opens its tab, and focuses it once the tab shows. */
function useShowField(form: GateEditApi, tab: GateTab, onTabChange: (tab: GateTab) => void) {
  const [focusAfterTab, setFocusAfterTab] = useState<GateFormField | null>(null);

  // A field on another tab can take focus only once its tab shows.
  useEffect(() => {
    if (focusAfterTab && tabOfField(focusAfterTab) === tab) {
      form.setFocus(focusAfterTab);
      setFocusAfterTab(null);
    }
  }, [focusAfterTab, tab, form]);

  return (field: GateFormField) => {
    const fieldTab = tabOfField(field);
    if (fieldTab && fieldTab !== tab) onTabChange(fieldTab);
    setFocusAfterTab(field);
  };
}

/** Deletes the gate and leaves for the gate list; resolves to a message when it could not. */
function useDeleteGate(id: string): () => Promise<string | null> {
  const [, deleteGate] = useMutation(DeleteGateMutation);
  const [, navigate] = useLocation();
  return async () => {
    const result = await deleteGate({ id }, { additionalTypenames: ['Gate'] });
    const outcome = result.data?.deleteGate;
    if (outcome?.__typename === 'MutationDeleteGateSuccess') {
      // Its edits went with it.
      leaveWithoutAsking();
      navigate('/gates', { replace: true });
      return null;
    }
    return (
      outcome?.message ??
      result.error?.graphQLErrors[0]?.message ??
      'The gate could not be deleted; try again.'
    );
  };
}

function GateHeader({ gate }: { gate: Gate }) {
  return (
    <>
      <p className="breadcrumb">
        <Link href="/gates">Gates</Link> / {gate.name}
      </p>
      <div className="page-header">
        <div>
          <h1>
            {gate.name}
            <span className="title-status">
              {gate.gateType === 'AGENT' && <span className="badge info">AGENT</span>}{' '}
              <SpendingBadge gate={gate} />
            </span>
          </h1>
          <p className="muted small">
            Gate id <span className="mono">{gate.id}</span> ·{' '}
            {gate.gateType === 'AGENT' ? 'agent gate' : 'standard gate'} ·{' '}
            {fromEnum(TASK_TYPES, gate.taskType)} · {gate.model}
          </p>
        </div>
      </div>
    </>
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
