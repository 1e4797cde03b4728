import type { GatePatch } from '@gatehouse/rules/gate';
import type { ReactNode } from 'react';
import type { FieldErrors, UseFormReturn } from 'react-hook-form';
import { onTabListKeyDown } from '../ui/tabs.ts';
import { BasicInfoTab } from './fields/BasicInfoFields.tsx';
import type { ModelOption, ModelsState } from './fields/ModelSelect.tsx';
import { ModelsRoutingTab } from './fields/ModelsRoutingFields.tsx';
import { RequestConfigTab } from './fields/RequestConfigFields.tsx';
import { SpendingFields } from './fields/SpendingLimitsFields.tsx';
import { UnconfiguredWarning } from './fields/UnconfiguredWarning.tsx';
import { type FormTab, type GateTab, isFormTab, tabOfField, tabsOf } from './gateEdit.ts';
import type { GateFormValues } from './gateForm.ts';

/** How many errors each tab holds, for the marks on the tabs. */
function errorsByTab(errors: FieldErrors<GateFormValues>): Partial<Record<FormTab, number>> {
  const counts: Partial<Record<FormTab, number>> = {};
  for (const [field, error] of Object.entries(errors)) {
    const tab = tabOfField(field);
    if (!tab || !error) continue;
    counts[tab] = (counts[tab] ?? 0) + (Array.isArray(error) ? error.filter(Boolean).length : 1);
  }
  return counts;
}

/**
 * A stored gate's settings in the tabs of the spec: the four that hold settings share one form
 * and one Save (a change on one tab survives a visit to another); Connections and Danger Zone
 * come from the page. Knows nothing of GraphQL.
 */
export function GateEditForm({
  form,
  onSubmit,
  onInvalid,
  onDiscard,
  tab,
  onTabChange,
  models,
  modelsState,
  architect,
  descriptionSuggestion,
  spendingNow,
  worstCaseUsd = null,
  tryIt,
  subGates,
  sessions,
  connections,
  history,
  dangerZone,
  savedNotice,
  agent,
}: {
  form: UseFormReturn<GateFormValues, unknown, GatePatch>;
  onSubmit: (patch: GatePatch) => Promise<void>;
  onInvalid: (errors: FieldErrors<GateFormValues>) => void;
  onDiscard: () => void;
  tab: GateTab;
  onTabChange: (tab: GateTab) => void;
  models: ModelOption[];
  modelsState: ModelsState;
  /** The Architect's analysis, shown on Models & Routing. */
  architect: ReactNode;
  /** The Architect's clearer description, offered on Basic Info. */
  descriptionSuggestion: ReactNode;
  /** The read-only spending figures shown under the limit. */
  spendingNow: ReactNode;
  /** One request's least worst case on the saved gate (null: not a chat gate). */
  worstCaseUsd?: number | null;
  tryIt: ReactNode;
  /** Agent gates only. */
  subGates: ReactNode;
  /** Agent gates only. */
  sessions: ReactNode;
  connections: ReactNode;
  /** The gate's versions, with rollback. */
  history: ReactNode;
  dangerZone: ReactNode;
  savedNotice: string | null;
  /** Whether the gate is an agent gate, with the agent tabs. */
  agent: boolean;
}) {
  const { handleSubmit, formState } = form;
  const topError = formState.errors.root?.server ?? formState.errors.root?.rules;
  const formTab = isFormTab(tab);
  const panel = (id: GateTab) => ({
    id: `panel-${id}`,
    role: 'tabpanel',
    'aria-labelledby': `tab-${id}`,
    hidden: tab !== id,
    className: 'tab-panel',
  });

  return (
    <>
      <GateTabList
        tab={tab}
        onTabChange={onTabChange}
        errorCounts={errorsByTab(formState.errors)}
        agent={agent}
      />

      <form
        className="form tab-form"
        aria-label="Gate settings"
        onSubmit={handleSubmit(onSubmit, onInvalid)}
        noValidate
        hidden={!formTab}
      >
        {topError && (
          <div className="banner error" role="alert">
            {topError.message}
          </div>
        )}
        <div {...panel('basic')}>
          <BasicInfoTab form={form} descriptionSuggestion={descriptionSuggestion} />
        </div>
        <div {...panel('routing')}>
          <ModelsRoutingTab form={form} models={models} modelsState={modelsState} architect={architect} />
        </div>
        <div {...panel('request')}>
          <RequestConfigTab form={form} />
        </div>
        <div {...panel('spending')}>
          <SpendingFields form={form} worstCaseUsd={worstCaseUsd}>
            {spendingNow}
          </SpendingFields>
        </div>
        <UnconfiguredWarning form={form} models={models} />
        <SaveBar form={form} savedNotice={savedNotice} onDiscard={onDiscard} />
      </form>

      <div {...panel('try')}>{tryIt}</div>
      {agent && <div {...panel('subgates')}>{subGates}</div>}
      {agent && <div {...panel('sessions')}>{sessions}</div>}
      <div {...panel('connections')}>{connections}</div>
      <div {...panel('history')}>{history}</div>
      <div {...panel('danger')}>{dangerZone}</div>
    </>
  );
}

/** The tabs, each with the number of errors its fields hold. */
function GateTabList({
  tab,
  onTabChange,
  errorCounts,
  agent,
}: {
  tab: GateTab;
  onTabChange: (tab: GateTab) => void;
  errorCounts: Partial<Record<FormTab, number>>;
  agent: boolean;
}) {
  return (
    <div className="tabs" role="tablist" aria-label="Gate settings" onKeyDown={onTabListKeyDown}>
      {tabsOf(agent).map(({ id, label }) => {
        const count = isFormTab(id) ? (errorCounts[id] ?? 0) : 0;
        return (
          <button
            key={id}
            id={`tab-${id}`}
            type="button"
            role="tab"
            aria-selected={tab === id}
            aria-controls={`panel-${id}`}
            tabIndex={tab === id ? 0 : -1}
            className={['tab', tab === id && 'active', id === 'danger' && 'danger'].filter(Boolean).join(' ')}
            onClick={() => onTabChange(id)}
          >
            {label}
            {count > 0 && (
              <>
                <span className="tab-errors" aria-hidden="true">
                  {count}
                </span>
                <span className="sr-only"> ({count} to fix)</span>
              </>
            )}
          </button>
        );
      })}
    </div>
  );
}

/** Save and Discard for all four setting tabs at once, with what the last save did. */
function SaveBar({
  form,
  savedNotice,
  onDiscard,
}: {
  form: UseFormReturn<GateFormValues, unknown, GatePatch>;
  savedNotice: string | null;
  onDiscard: () => void;
}) {
  const { isSubmitting, isDirty } = form.formState;
  return (
    <div className="actions save-bar">
      {savedNotice && !isDirty && (
        <span className="saved" role="status">
          {savedNotice}
        </span>
      )}
      {isDirty && <span className="muted">Unsaved changes</span>}
      <button type="button" className="button subtle" onClick={onDiscard} disabled={!isDirty || isSubmitting}>
        Discard changes
      </button>
      <button type="submit" className="button primary" disabled={isSubmitting}>
        {isSubmitting ? 'Saving…' : 'Save changes'}
      </button>
    </div>
  );
}
