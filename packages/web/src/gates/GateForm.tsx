import type { GateCreate } from '@gatehouse/rules/gate';
import type { UseFormReturn } from 'react-hook-form';
import { AgentFields, GateTypeField, IdentityFields, TaskTypeField } from './fields/BasicInfoFields.tsx';
import type { ModelOption, ModelsState } from './fields/ModelSelect.tsx';
import {
  FallbackModelsField,
  PrimaryModelField,
  RoutingStrategyField,
} from './fields/ModelsRoutingFields.tsx';
import { SamplingFields } from './fields/RequestConfigFields.tsx';
import { SpendingFields } from './fields/SpendingLimitsFields.tsx';
import { UnconfiguredWarning } from './fields/UnconfiguredWarning.tsx';
import type { GateFormValues } from './gateForm.ts';

/**
 * A new gate's essential settings; the gate page holds the rest. Takes the models to offer from
 * its container and knows nothing of GraphQL.
 */
export function GateForm({
  form,
  onSubmit,
  models,
  modelsState,
  submitLabel,
  onCancel,
  worstCaseUsd = null,
}: {
  form: UseFormReturn<GateFormValues, unknown, GateCreate>;
  onSubmit: (input: GateCreate) => Promise<void>;
  models: ModelOption[];
  modelsState: ModelsState;
  submitLabel: string;
  onCancel: () => void;
  /** One request's worst case for the settings as they stand, where known. */
  worstCaseUsd?: number | null;
}) {
  const { handleSubmit, formState } = form;
  const { errors, isSubmitting } = formState;
  const topError = errors.root?.server ?? errors.root?.rules;

  return (
    <form className="form" aria-label="Gate settings" onSubmit={handleSubmit(onSubmit)} noValidate>
      {topError && (
        <div className="banner error" role="alert">
          {topError.message}
        </div>
      )}

      <fieldset>
        <legend>Basic info</legend>
        <GateTypeField form={form} />
        <IdentityFields form={form} />
      </fieldset>

      <AgentFields form={form} />

      <fieldset>
        <legend>Models &amp; routing</legend>
        <div className="row">
          <TaskTypeField form={form} />
          <PrimaryModelField form={form} models={models} modelsState={modelsState} label="Model" />
        </div>
        <RoutingStrategyField form={form} />
        <FallbackModelsField form={form} models={models} modelsState={modelsState} />
      </fieldset>

      <fieldset>
        <legend>Request config</legend>
        <SamplingFields form={form} />
      </fieldset>

      <fieldset>
        <legend>Spending limits</legend>
        <SpendingFields form={form} worstCaseUsd={worstCaseUsd} />
      </fieldset>

      <UnconfiguredWarning form={form} models={models} />
      <div className="actions">
        <button type="button" className="button subtle" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="button primary" disabled={isSubmitting}>
          {isSubmitting ? 'Saving…' : submitLabel}
        </button>
      </div>
    </form>
  );
}
