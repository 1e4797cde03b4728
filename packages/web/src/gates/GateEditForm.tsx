import type { GatePatch } from '@gatehouse/server/rules/gate';
import type { ReactNode } from 'react';
import type { FieldErrors, UseFormReturn } from 'react-hook-form';
import {
  ArchitectFields,
  AutoEnhanceField,
  FallbackModelsField,
  IdentityFields,
  type ModelOption,
  type ModelsState,
  OverridePermissionsField,
  PrimaryModelField,
  RoutingStrategyField,
  SamplingFields,
  SpendingFields,
  StructuredOutputFields,
  TaskSubtypeField,
  TaskTypeField,
} from './GateFields.tsx';
import { type FormTab, GATE_TABS, type GateTab, tabOfField } from './gateEdit.ts';
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
  spendingNow,
  connections,
  dangerZone,
  savedNotice,
}: {
  form: UseFormReturn<GateFormValues, unknown, GatePatch>;
  onSubmit: (patch: GatePatch) => Promise<void>;
  onInvalid: (errors: FieldErrors<GateFormValues>) => void;
  onDiscard: () => void;
  tab: GateTab;
  onTabChange: (tab: GateTab) => void;
  models: ModelOption[];
  modelsState: ModelsState;
  /** The read-only spending figures shown under the limit. */
  spendingNow: ReactNode;
  connections: ReactNode;
  dangerZone: ReactNode;
  savedNotice: string | null;
}) {
  const { handleSubmit, formState } = form;
  const { errors, isSubmitting, isDirty } = formState;
  const topError = errors.root?.server ?? errors.root?.rules;
  const counts = errorsByTab(errors);
  const formTab = tab !== 'connections' && tab !== 'danger';
  const panel = (id: GateTab) => ({
    id: `panel-${id}`,
    role: 'tabpanel',
    'aria-labelledby': `tab-${id}`,
    hidden: tab !== id,
    className: 'tab-panel',
  });

  return (
    <>
      <div className="tabs" role="tablist" aria-label="Gate settings">
        {GATE_TABS.map(({ id, label }) => {
          const count = id === 'connections' || id === 'danger' ? 0 : (counts[id] ?? 0);
          return (
            <button
              key={id}
              id={`tab-${id}`}
              type="button"
              role="tab"
              aria-selected={tab === id}
              aria-controls={`panel-${id}`}
              className={['tab', tab === id && 'active', id === 'danger' && 'danger']
                .filter(Boolean)
                .join(' ')}
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
          <IdentityFields form={form} />
          <AutoEnhanceField form={form} />
          <div className="row">
            <TaskTypeField form={form} />
            <TaskSubtypeField form={form} />
          </div>
        </div>
        <div {...panel('routing')}>
          <div className="row">
            <PrimaryModelField form={form} models={models} modelsState={modelsState} />
            <RoutingStrategyField form={form} />
          </div>
          <FallbackModelsField form={form} models={models} modelsState={modelsState} />
          <div className="subsection">
            <h3>Architect</h3>
            <p className="hint">How the Architect weighs models when it recommends them for this gate.</p>
          </div>
          <ArchitectFields form={form} />
        </div>
        <div {...panel('request')}>
          <SamplingFields form={form} />
          <OverridePermissionsField form={form} />
          <div className="subsection">
            <h3>Structured output</h3>
          </div>
          <StructuredOutputFields form={form} />
        </div>
        <div {...panel('spending')}>
          <SpendingFields form={form}>{spendingNow}</SpendingFields>
        </div>

        <div className="actions save-bar">
          {savedNotice && !isDirty && (
            <span className="saved" role="status">
              {savedNotice}
            </span>
          )}
          {isDirty && <span className="muted">Unsaved changes</span>}
          <button
            type="button"
            className="button subtle"
            onClick={onDiscard}
            disabled={!isDirty || isSubmitting}
          >
            Discard changes
          </button>
          <button type="submit" className="button primary" disabled={isSubmitting}>
            {isSubmitting ? 'Saving…' : 'Save changes'}
          </button>
        </div>
      </form>

      <div {...panel('connections')}>{connections}</div>
      <div {...panel('danger')}>{dangerZone}</div>
    </>
  );
}
