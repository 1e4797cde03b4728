import type { GateCreate } from '@gatehouse/server/rules/gate';
import {
  ROUTING_STRATEGIES,
  SPENDING_ENFORCEMENTS,
  SPENDING_PERIODS,
  TASK_TYPES,
} from '@gatehouse/server/rules/gate';
import { type UseFormReturn, useFieldArray } from 'react-hook-form';
import { Field } from '../ui/Field.tsx';
import type { GateFormValues } from './gateForm.ts';

export type ModelOption = { id: string; name: string; provider: string; deprecated: boolean };

const routingLabels: Record<GateFormValues['routingStrategy'], string> = {
  single: 'Single: the primary model only',
  fallback: 'Fallback: primary, then each fallback in order',
  'round-robin': 'Round-robin: spread across primary and fallbacks',
};
const periodLabels: Record<GateFormValues['spendingLimitPeriod'], string> = {
  monthly: 'Per month (UTC)',
  daily: 'Per day (UTC)',
};
const enforcementLabels: Record<GateFormValues['spendingEnforcement'], string> = {
  alert_only: 'Alert only',
  block: 'Block requests',
};

/** The gate's settings; knows nothing of GraphQL, takes the models to offer from its container. */
export function GateForm({
  form,
  onSubmit,
  models,
  modelsState,
  submitLabel,
  onCancel,
}: {
  form: UseFormReturn<GateFormValues, unknown, GateCreate>;
  onSubmit: (input: GateCreate) => Promise<void>;
  models: ModelOption[];
  modelsState: 'loading' | 'ready' | 'failed';
  submitLabel: string;
  onCancel: () => void;
}) {
  const { register, handleSubmit, formState, control } = form;
  const { errors, isSubmitting } = formState;
  const fallbacks = useFieldArray({ control, name: 'fallbackModels' });
  const topError = errors.root?.server ?? errors.root?.rules;
  const modelPlaceholder =
    modelsState === 'loading'
      ? 'Loading models…'
      : modelsState === 'failed'
        ? 'Models could not be loaded'
        : 'Choose a model';

  const modelOptions = (
    <>
      <option value="">{modelPlaceholder}</option>
      {groupByProvider(models).map(([provider, group]) => (
        <optgroup key={provider} label={provider}>
          {group.map((model) => (
            <option key={model.id} value={model.id}>
              {model.id}
              {model.deprecated ? ' (deprecated)' : ''}
            </option>
          ))}
        </optgroup>
      ))}
    </>
  );

  return (
    <form className="form gate-form" onSubmit={handleSubmit(onSubmit)} noValidate>
      {topError && (
        <div className="banner error" role="alert">
          {topError.message}
        </div>
      )}

      <fieldset>
        <legend>Basic info</legend>
        <Field label="Name" htmlFor="name" error={errors.name}>
          <input id="name" autoComplete="off" {...invalid('name', errors.name)} {...register('name')} />
        </Field>
        <Field label="Description" htmlFor="description" error={errors.description} hint="Optional.">
          <textarea
            id="description"
            rows={2}
            {...invalid('description', errors.description)}
            {...register('description')}
          />
        </Field>
        <Field
          label="Tags"
          htmlFor="tags"
          error={errors.tags}
          hint="Comma-separated, e.g. support, production."
        >
          <input id="tags" autoComplete="off" {...invalid('tags', errors.tags)} {...register('tags')} />
        </Field>
      </fieldset>

      <fieldset>
        <legend>Models &amp; routing</legend>
        <div className="row">
          <Field label="Task type" htmlFor="taskType" error={errors.taskType}>
            <select id="taskType" {...invalid('taskType', errors.taskType)} {...register('taskType')}>
              {TASK_TYPES.map((type) => (
                <option key={type} value={type}>
                  {type}
                </option>
              ))}
            </select>
          </Field>
          <Field
            label="Model"
            htmlFor="model"
            error={errors.model}
            hint={modelsState === 'ready' ? `${models.length} models for this task type.` : undefined}
          >
            <select id="model" {...invalid('model', errors.model)} {...register('model')}>
              {modelOptions}
            </select>
          </Field>
        </div>
        <Field label="Routing strategy" htmlFor="routingStrategy" error={errors.routingStrategy}>
          <select
            id="routingStrategy"
            {...invalid('routingStrategy', errors.routingStrategy)}
            {...register('routingStrategy')}
          >
            {ROUTING_STRATEGIES.map((strategy) => (
              <option key={strategy} value={strategy}>
                {routingLabels[strategy]}
              </option>
            ))}
          </select>
        </Field>
        <div className="field">
          <span className="label">Fallback models</span>
          {fallbacks.fields.length === 0 && (
            <p className="hint">None. Fallback and round-robin routing use them, in this order.</p>
          )}
          {fallbacks.fields.map((row, i) => {
            const error = errors.fallbackModels?.[i]?.model;
            return (
              <div key={row.id} className="fallback">
                <Field label={`Fallback ${i + 1}`} htmlFor={`fallbackModels.${i}`} error={error}>
                  <div className="copy-row">
                    <select
                      id={`fallbackModels.${i}`}
                      {...invalid(`fallbackModels.${i}`, error)}
                      {...register(`fallbackModels.${i}.model`)}
                    >
                      {modelOptions}
                    </select>
                    <button type="button" className="button subtle" onClick={() => fallbacks.remove(i)}>
                      Remove
                    </button>
                  </div>
                </Field>
              </div>
            );
          })}
          {errors.fallbackModels?.message && (
            <p className="field-error" role="alert">
              {errors.fallbackModels.message}
            </p>
          )}
          <button
            type="button"
            className="button subtle add"
            onClick={() => fallbacks.append({ model: '' }, { shouldFocus: true })}
          >
            Add fallback model
          </button>
        </div>
      </fieldset>

      <fieldset>
        <legend>Request config</legend>
        <Field
          label="System prompt"
          htmlFor="systemPrompt"
          error={errors.systemPrompt}
          hint="Optional; prepended to every request."
        >
          <textarea
            id="systemPrompt"
            rows={4}
            {...invalid('systemPrompt', errors.systemPrompt)}
            {...register('systemPrompt')}
          />
        </Field>
        <div className="row three">
          <Field label="Temperature" htmlFor="temperature" error={errors.temperature} hint="0 to 2.">
            <input
              id="temperature"
              type="number"
              step="any"
              inputMode="decimal"
              {...invalid('temperature', errors.temperature)}
              {...register('temperature')}
            />
          </Field>
          <Field label="Max tokens" htmlFor="maxTokens" error={errors.maxTokens} hint="A whole number.">
            <input
              id="maxTokens"
              type="number"
              step="1"
              inputMode="numeric"
              {...invalid('maxTokens', errors.maxTokens)}
              {...register('maxTokens')}
            />
          </Field>
          <Field label="Top P" htmlFor="topP" error={errors.topP} hint="0 to 1.">
            <input
              id="topP"
              type="number"
              step="any"
              inputMode="decimal"
              {...invalid('topP', errors.topP)}
              {...register('topP')}
            />
          </Field>
        </div>
      </fieldset>

      <fieldset>
        <legend>Spending limits</legend>
        <div className="row three">
          <Field
            label="Limit (USD)"
            htmlFor="spendingLimit"
            error={errors.spendingLimit}
            hint="Blank for no limit."
          >
            <input
              id="spendingLimit"
              type="number"
              step="any"
              min="0"
              inputMode="decimal"
              {...invalid('spendingLimit', errors.spendingLimit)}
              {...register('spendingLimit')}
            />
          </Field>
          <Field label="Period" htmlFor="spendingLimitPeriod" error={errors.spendingLimitPeriod}>
            <select id="spendingLimitPeriod" {...register('spendingLimitPeriod')}>
              {SPENDING_PERIODS.map((period) => (
                <option key={period} value={period}>
                  {periodLabels[period]}
                </option>
              ))}
            </select>
          </Field>
          <Field
            label="Enforcement"
            htmlFor="spendingEnforcement"
            error={errors.spendingEnforcement}
            hint="Over the limit: warn, or refuse."
          >
            <select id="spendingEnforcement" {...register('spendingEnforcement')}>
              {SPENDING_ENFORCEMENTS.map((enforcement) => (
                <option key={enforcement} value={enforcement}>
                  {enforcementLabels[enforcement]}
                </option>
              ))}
            </select>
          </Field>
        </div>
      </fieldset>

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

/** Marks a control invalid for assistive technology and points it at its message. */
function invalid(id: string, error: { message?: string } | undefined) {
  return error ? { 'aria-invalid': true, 'aria-describedby': `${id}-error` } : {};
}

function groupByProvider(models: ModelOption[]): [string, ModelOption[]][] {
  const groups = new Map<string, ModelOption[]>();
  for (const model of models) {
    const group = groups.get(model.provider);
    if (group) group.push(model);
    else groups.set(model.provider, [model]);
  }
  return [...groups.entries()];
}
