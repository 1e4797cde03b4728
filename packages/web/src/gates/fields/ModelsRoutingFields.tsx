/** The Models & Routing tab: the primary model, how requests are routed, and how the Architect weighs models. */
import {
  ANALYSIS_PRESETS,
  AUTO_APPLY_MARGIN,
  MIN_LATENCY_SAMPLES,
  OBSERVED_WINDOW_DAYS,
  type Weights,
} from '@gatehouse/rules/architect';
import { ANALYSIS_METHODS, LIMITS, REANALYSIS_PERIODS, ROUTING_STRATEGIES } from '@gatehouse/rules/gate';
import type { ReactNode } from 'react';
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
  daily: 'Daily (once per UTC day)',
  weekly: 'Weekly (once per ISO week, from Monday UTC)',
  monthly: 'Monthly (once per UTC calendar month)',
  never: 'Never (only when you press Analyse)',
};

const share = (x: number) => `${Math.round(x * 100)}%`;
const presetWeights = (w: Weights) =>
  `cost ${share(w.cost)}, latency ${share(w.latency)}, quality ${share(w.quality)}`;
const weightLabels = {
  costWeight: 'Cost weight',
  latencyWeight: 'Latency weight',
  qualityWeight: 'Quality weight',
} as const;

type ModelsProps = { form: GateFormApi; models: ModelOption[]; modelsState: ModelsState };

/** The tab as the gate page shows it, with the Architect's latest analysis (`architect`) below its settings. */
export function ModelsRoutingTab({
  form,
  models,
  modelsState,
  architect,
}: ModelsProps & { architect?: ReactNode }) {
  return (
    <>
      <div className="row">
        <PrimaryModelField form={form} models={models} modelsState={modelsState} />
        <RoutingStrategyField form={form} />
      </div>
      <FallbackModelsField form={form} models={models} modelsState={modelsState} />
      <div className="subsection">
        <h3>Architect</h3>
        <p className="hint">
          How the Architect weighs models when it recommends them for this gate. It analyses the saved
          settings: save a change here before you analyse again.
        </p>
      </div>
      <ArchitectFields form={form} />
      {architect}
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
        hint={`On: after each scheduled re-analysis (so never while the period is Never) the Architect sets the primary and fallback models itself, only when its choice beats the current primary's total score by ${AUTO_APPLY_MARGIN} or the current one no longer passes the filters, and records the change in the gate's history as made by the Architect. Off: recommendations wait for you to apply them.`}
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
        hint={`Cost weighs ${presetWeights(ANALYSIS_PRESETS.cost)}; balanced a third each; performance ${presetWeights(ANALYSIS_PRESETS.performance)}; custom the three weights below. None: balanced, or custom when a weight is set.`}
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
        hint={`How often the Architect analyses this gate again on its own, over its last ${OBSERVED_WINDOW_DAYS.default} days of traffic.`}
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
          hint={weightHint(analysisMethod)}
          min={0}
          max={1}
        />
      ))}
    </div>
  );
}

function weightHint(method: GateFormValues['analysisMethod']): string {
  if (method === 'custom') return '0 to 1; required for custom. The three are scaled to sum to 1.';
  if (method === '') return '0 to 1. With no method, setting any weight makes the analysis custom.';
  return `0 to 1. Unused while the method is ${method}.`;
}

/** The most a recommended model may cost and take: hard filters, never weighed against the rest. */
function ArchitectCapFields({ form }: { form: GateFormApi }) {
  return (
    <div className="row">
      <NumberField
        form={form}
        name="maxCostPer1kTokens"
        label="Max cost per 1k tokens (USD)"
        hint={`0 to ${formatCount(LIMITS.maxCostPer1kTokens)}. A hard filter on chat and embeddings gates: a model priced above it (at this gate's mix of input and output tokens), or with no known price, is never recommended. Blank: no cap.`}
        min={0}
        max={LIMITS.maxCostPer1kTokens}
      />
      <NumberField
        form={form}
        name="maxLatencyMs"
        label="Max latency (ms)"
        hint={`A whole number, 1 to ${formatCount(LIMITS.maxLatencyMs)}. A hard filter: a model whose p95 latency seen by this gateway (once ${MIN_LATENCY_SAMPLES} attempts are seen; the catalog's typical latency before that) is above it, or that has no latency figure, is never recommended. Blank: no cap.`}
        step="1"
        min={1}
        max={LIMITS.maxLatencyMs}
      />
    </div>
  );
}
