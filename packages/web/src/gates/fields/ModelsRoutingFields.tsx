/** The Models & Routing tab: the primary model, how requests are routed, and how the Architect weighs models. */
import { ANALYSIS_METHODS, LIMITS, REANALYSIS_PERIODS, ROUTING_STRATEGIES } from '@gatehouse/rules/gate';
import { useFieldArray, useWatch } from 'react-hook-form';
import { formatCount } from '../../logs/format.ts';
import { Field } from '../../ui/Field.tsx';
import type { GateFormValues } from '../gateForm.ts';
import { type GateFormApi, invalid, NumberField, Toggle } from './controls.tsx';
import { type ModelOption, ModelSelect, type ModelsState } from './ModelSelect.tsx';

const routingLabels: Record<GateFormValues['routingStrategy'], string> = {
  single: 'Single: the primary model only',
  fallback: 'Fallback: primary, then each fallback in order',
  'round-robin': 'Round-robin: spread across primary and fallbacks',
};
const analysisLabels: Record<Exclude<GateFormValues['analysisMethod'], ''>, string> = {
  cost: 'Cost: cheapest that does the job',
  balanced: 'Balanced',
  performance: 'Performance: best quality and speed',
  custom: 'Custom: use the three weights',
};
const reanalysisLabels: Record<GateFormValues['reanalysisPeriod'], string> = {
  daily: 'Daily',
  weekly: 'Weekly',
  monthly: 'Monthly',
  never: 'Never',
};
const weightLabels = {
  costWeight: 'Cost weight',
  latencyWeight: 'Latency weight',
  qualityWeight: 'Quality weight',
} as const;

type ModelsProps = { form: GateFormApi; models: ModelOption[]; modelsState: ModelsState };

/** The tab as the gate page shows it. */
export function ModelsRoutingTab({ form, models, modelsState }: ModelsProps) {
  return (
    <>
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
    </>
  );
}

export function PrimaryModelField({
  form,
  models,
  modelsState,
  label = 'Primary model',
}: ModelsProps & { label?: string }) {
  const { errors } = form.formState;
  return (
    <Field
      label={label}
      htmlFor="model"
      error={errors.model}
      hint={
        modelsState === 'ready' ? `${models.length} models for this task type.` : 'Offered by the task type.'
      }
    >
      <ModelSelect
        form={form}
        id="model"
        name="model"
        error={errors.model}
        models={models}
        modelsState={modelsState}
      />
    </Field>
  );
}

export function RoutingStrategyField({ form }: { form: GateFormApi }) {
  const { errors } = form.formState;
  return (
    <Field
      label="Routing strategy"
      htmlFor="routingStrategy"
      error={errors.routingStrategy}
      hint="Fallback and round-robin use the fallback models."
    >
      <select
        id="routingStrategy"
        {...invalid('routingStrategy', errors.routingStrategy)}
        {...form.register('routingStrategy')}
      >
        {ROUTING_STRATEGIES.map((strategy) => (
          <option key={strategy} value={strategy}>
            {routingLabels[strategy]}
          </option>
        ))}
      </select>
    </Field>
  );
}

export function FallbackModelsField({ form, models, modelsState }: ModelsProps) {
  const { errors } = form.formState;
  const fallbacks = useFieldArray({ control: form.control, name: 'fallbackModels' });
  return (
    <div className="field">
      <span className="label">Fallback models</span>
      {fallbacks.fields.length === 0 && (
        <p className="hint">
          None. Fallback and round-robin routing use them, in this order (up to {LIMITS.fallbackModels}).
        </p>
      )}
      {fallbacks.fields.map((row, i) => {
        const error = errors.fallbackModels?.[i]?.model;
        return (
          <div key={row.id} className="fallback">
            <Field label={`Fallback ${i + 1}`} htmlFor={`fallbackModels.${i}`} error={error}>
              <div className="copy-row">
                <ModelSelect
                  form={form}
                  id={`fallbackModels.${i}`}
                  name={`fallbackModels.${i}.model`}
                  error={error}
                  models={models}
                  modelsState={modelsState}
                />
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
      {fallbacks.fields.length < LIMITS.fallbackModels && (
        <button
          type="button"
          className="button subtle add"
          onClick={() => fallbacks.append({ model: '' }, { shouldFocus: true })}
        >
          Add fallback model
        </button>
      )}
    </div>
  );
}

/** How the Architect weighs models when it recommends them for this gate. */
export function ArchitectFields({ form }: { form: GateFormApi }) {
  return (
    <>
      <ArchitectScheduleFields form={form} />
      <ArchitectWeightFields form={form} />
      <ArchitectCapFields form={form} />
      <Toggle
        id="autoApplyRecommendations"
        label="Apply recommendations automatically"
        hint="Off: the Architect's recommendations wait for your review."
      >
        <input
          id="autoApplyRecommendations"
          type="checkbox"
          className="check"
          {...form.register('autoApplyRecommendations')}
        />
      </Toggle>
    </>
  );
}

/** The preset the Architect analyses by, and how often it analyses again. */
function ArchitectScheduleFields({ form }: { form: GateFormApi }) {
  const { register, formState } = form;
  const { errors } = formState;
  return (
    <div className="row">
      <Field
        label="Analysis method"
        htmlFor="analysisMethod"
        error={errors.analysisMethod}
        hint="A preset profile; custom uses the three weights."
      >
        <select
          id="analysisMethod"
          {...invalid('analysisMethod', errors.analysisMethod)}
          {...register('analysisMethod')}
        >
          <option value="">None</option>
          {ANALYSIS_METHODS.map((method) => (
            <option key={method} value={method}>
              {analysisLabels[method]}
            </option>
          ))}
        </select>
      </Field>
      <Field
        label="Reanalysis period"
        htmlFor="reanalysisPeriod"
        error={errors.reanalysisPeriod}
        hint="How often recommendations are re-evaluated."
      >
        <select id="reanalysisPeriod" {...register('reanalysisPeriod')}>
          {REANALYSIS_PERIODS.map((period) => (
            <option key={period} value={period}>
              {reanalysisLabels[period]}
            </option>
          ))}
        </select>
      </Field>
    </div>
  );
}

/** Cost, latency and quality weights, which the custom analysis method requires. */
function ArchitectWeightFields({ form }: { form: GateFormApi }) {
  const analysisMethod = useWatch({ control: form.control, name: 'analysisMethod' });
  return (
    <div className="row three">
      {(['costWeight', 'latencyWeight', 'qualityWeight'] as const).map((name) => (
        <NumberField
          key={name}
          form={form}
          name={name}
          label={weightLabels[name]}
          hint={analysisMethod === 'custom' ? '0 to 1; required for custom.' : '0 to 1.'}
          min={0}
          max={1}
        />
      ))}
    </div>
  );
}

/** The most a recommended model may cost and take. */
function ArchitectCapFields({ form }: { form: GateFormApi }) {
  return (
    <div className="row">
      <NumberField
        form={form}
        name="maxCostPer1kTokens"
        label="Max cost per 1k tokens (USD)"
        hint={`0 to ${formatCount(LIMITS.maxCostPer1kTokens)}. Blank: no cap.`}
        min={0}
        max={LIMITS.maxCostPer1kTokens}
      />
      <NumberField
        form={form}
        name="maxLatencyMs"
        label="Max latency (ms)"
        hint={`A whole number, 1 to ${formatCount(LIMITS.maxLatencyMs)}. Blank: no cap.`}
        step="1"
        min={1}
        max={LIMITS.maxLatencyMs}
      />
    </div>
  );
}
