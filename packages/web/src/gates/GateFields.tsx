/**
 * The gate's settings, field by field, with their ranges and help texts written once: the create
 * form shows the essentials in fieldsets, the gate page every setting in the spec's tabs (Basic
 * Info, Models & Routing, Request Config, Spending Limits). Both hold the same form values.
 */
import {
  ANALYSIS_METHODS,
  LIMITS,
  OVERRIDABLE_FIELDS,
  REANALYSIS_PERIODS,
  RESPONSE_FORMAT_TYPES,
  ROUTING_STRATEGIES,
  SPENDING_ENFORCEMENTS,
  SPENDING_PERIODS,
  TASK_SUBTYPES,
  TASK_TYPES,
} from '@gatehouse/server/rules/gate';
import type { ReactNode } from 'react';
import { type FieldError, type UseFormReturn, useFieldArray, useWatch } from 'react-hook-form';
import { sentence } from '../forms/formErrors.ts';
import { Field } from '../ui/Field.tsx';
import { type GateFormValues, jsonProblem } from './gateForm.ts';

/** The form, whatever its submit produces (a new gate's input, or a patch). */
// biome-ignore lint/suspicious/noExplicitAny: the sections never submit, so the submitted type is irrelevant here
export type GateFormApi = UseFormReturn<GateFormValues, unknown, any>;

export type ModelOption = { id: string; name: string; provider: string; deprecated: boolean };
export type ModelsState = 'loading' | 'ready' | 'failed';

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
  block: 'Block (HTTP 402)',
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
const responseFormatLabels: Record<GateFormValues['responseFormatType'], string> = {
  text: 'Text',
  json_object: 'JSON object: any valid JSON',
  json_schema: 'JSON schema: validated against the schema below',
};
const weightLabels = {
  costWeight: 'Cost weight',
  latencyWeight: 'Latency weight',
  qualityWeight: 'Quality weight',
} as const;
const overrideLabels: Record<(typeof OVERRIDABLE_FIELDS)[number], string> = {
  model: 'Model',
  temperature: 'Temperature',
  maxTokens: 'Max tokens',
  topP: 'Top P',
};

const count = (n: number) => n.toLocaleString('en-US');

/** Marks a control invalid for assistive technology and points it at its message. */
export function invalid(id: string, error: { message?: string } | undefined) {
  return error ? { 'aria-invalid': true, 'aria-describedby': `${id}-error` } : {};
}

/** A checkbox with its label beside it, and its hint below. */
function Toggle({
  id,
  label,
  hint,
  children,
}: {
  id: string;
  label: string;
  hint?: ReactNode;
  children: ReactNode;
}) {
  return (
    <div className="field toggle">
      <div className="toggle-row">
        {children}
        <label htmlFor={id} className="toggle-label">
          {label}
        </label>
      </div>
      {hint && <p className="hint">{hint}</p>}
    </div>
  );
}

/** A number typed as text, so a blank stays blank (the gate's default) rather than becoming 0. */
function NumberInput({
  form,
  name,
  error,
  step = 'any',
  min,
  max,
}: {
  form: GateFormApi;
  name: keyof Pick<
    GateFormValues,
    | 'temperature'
    | 'maxTokens'
    | 'topP'
    | 'costWeight'
    | 'latencyWeight'
    | 'qualityWeight'
    | 'maxCostPer1kTokens'
    | 'maxLatencyMs'
    | 'spendingLimit'
  >;
  error: FieldError | undefined;
  step?: string;
  min?: number;
  max?: number;
}) {
  return (
    <input
      id={name}
      type="number"
      step={step}
      min={min}
      max={max}
      inputMode={step === '1' ? 'numeric' : 'decimal'}
      {...invalid(name, error)}
      {...form.register(name)}
    />
  );
}

/** Name, description and tags: what every gate has to say about itself. */
export function IdentityFields({ form }: { form: GateFormApi }) {
  const { register, formState } = form;
  const { errors } = formState;
  return (
    <>
      <Field
        label="Name"
        htmlFor="name"
        error={errors.name}
        hint={`Up to ${LIMITS.nameLength} characters; unique among your gates. Shown in the dashboard and the logs.`}
      >
        <input id="name" autoComplete="off" {...invalid('name', errors.name)} {...register('name')} />
      </Field>
      <Field
        label="Description"
        htmlFor="description"
        error={errors.description}
        hint={`Optional, up to ${count(LIMITS.descriptionLength)} characters: what the gate is for. The Architect reads it to recommend models.`}
      >
        <textarea
          id="description"
          rows={3}
          {...invalid('description', errors.description)}
          {...register('description')}
        />
      </Field>
      <Field
        label="Tags"
        htmlFor="tags"
        error={errors.tags}
        hint={`Comma-separated, e.g. support, production. Up to ${LIMITS.tags} tags of ${LIMITS.tagLength} characters.`}
      >
        <input id="tags" autoComplete="off" {...invalid('tags', errors.tags)} {...register('tags')} />
      </Field>
    </>
  );
}

export function AutoEnhanceField({ form }: { form: GateFormApi }) {
  return (
    <Toggle
      id="autoEnhanceDescription"
      label="Auto-enhance description"
      hint="Let the Architect offer a clearer description; it replaces yours only when you accept it."
    >
      <input
        id="autoEnhanceDescription"
        type="checkbox"
        className="check"
        {...form.register('autoEnhanceDescription')}
      />
    </Toggle>
  );
}

export function TaskTypeField({ form }: { form: GateFormApi }) {
  const { errors } = form.formState;
  return (
    <Field
      label="Task type"
      htmlFor="taskType"
      error={errors.taskType}
      hint="Decides which models the gate may use."
    >
      <select id="taskType" {...invalid('taskType', errors.taskType)} {...form.register('taskType')}>
        {TASK_TYPES.map((type) => (
          <option key={type} value={type}>
            {type}
          </option>
        ))}
      </select>
    </Field>
  );
}

export function TaskSubtypeField({ form }: { form: GateFormApi }) {
  const { errors } = form.formState;
  const taskType = useWatch({ control: form.control, name: 'taskType' });
  return (
    <Field
      label="Subtype"
      htmlFor="taskSubtype"
      error={errors.taskSubtype}
      hint={taskType === 'chat' ? 'Optional: reasoning, code or realtime.' : 'Chat gates only.'}
    >
      <select
        id="taskSubtype"
        {...invalid('taskSubtype', errors.taskSubtype)}
        {...form.register('taskSubtype')}
      >
        <option value="">None</option>
        {TASK_SUBTYPES.map((subtype) => (
          <option key={subtype} value={subtype}>
            {subtype}
          </option>
        ))}
      </select>
    </Field>
  );
}

/**
 * A model choice among the catalog's models of the gate's task type. A value the list lacks (a
 * model gone from the catalog) stays offered, so showing a gate never changes it.
 */
function ModelSelect({
  form,
  id,
  name,
  error,
  models,
  modelsState,
}: {
  form: GateFormApi;
  id: string;
  name: 'model' | `fallbackModels.${number}.model`;
  error: FieldError | undefined;
  models: ModelOption[];
  modelsState: ModelsState;
}) {
  const value = useWatch({ control: form.control, name });
  // Rendered only once the options are known: an uncontrolled select shows its value only if
  // the option is there when it mounts.
  if (modelsState !== 'ready') {
    return (
      <select id={id} disabled {...invalid(id, error)}>
        <option>{modelsState === 'loading' ? 'Loading models…' : 'Models could not be loaded'}</option>
      </select>
    );
  }
  const missing = value !== '' && !models.some((model) => model.id === value);
  return (
    <select id={id} {...invalid(id, error)} {...form.register(name)}>
      <option value="">Choose a model</option>
      {missing && <option value={value}>{value} (not offered for this task type)</option>}
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
    </select>
  );
}

type ModelsProps = { form: GateFormApi; models: ModelOption[]; modelsState: ModelsState };

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
  const { register, formState, control } = form;
  const { errors } = formState;
  const analysisMethod = useWatch({ control, name: 'analysisMethod' });
  return (
    <>
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
      <div className="row three">
        {(['costWeight', 'latencyWeight', 'qualityWeight'] as const).map((name) => (
          <Field
            key={name}
            label={weightLabels[name]}
            htmlFor={name}
            error={errors[name]}
            hint={analysisMethod === 'custom' ? '0 to 1; required for custom.' : '0 to 1.'}
          >
            <NumberInput form={form} name={name} error={errors[name]} min={0} max={1} />
          </Field>
        ))}
      </div>
      <div className="row">
        <Field
          label="Max cost per 1k tokens (USD)"
          htmlFor="maxCostPer1kTokens"
          error={errors.maxCostPer1kTokens}
          hint={`0 to ${count(LIMITS.maxCostPer1kTokens)}. Blank: no cap.`}
        >
          <NumberInput
            form={form}
            name="maxCostPer1kTokens"
            error={errors.maxCostPer1kTokens}
            min={0}
            max={LIMITS.maxCostPer1kTokens}
          />
        </Field>
        <Field
          label="Max latency (ms)"
          htmlFor="maxLatencyMs"
          error={errors.maxLatencyMs}
          hint={`A whole number, 1 to ${count(LIMITS.maxLatencyMs)}. Blank: no cap.`}
        >
          <NumberInput
            form={form}
            name="maxLatencyMs"
            error={errors.maxLatencyMs}
            step="1"
            min={1}
            max={LIMITS.maxLatencyMs}
          />
        </Field>
      </div>
      <Toggle
        id="autoApplyRecommendations"
        label="Apply recommendations automatically"
        hint="Off: the Architect's recommendations wait for your review."
      >
        <input
          id="autoApplyRecommendations"
          type="checkbox"
          className="check"
          {...register('autoApplyRecommendations')}
        />
      </Toggle>
    </>
  );
}

/** The system prompt and the sampling parameters every request through the gate gets. */
export function SamplingFields({ form }: { form: GateFormApi }) {
  const { register, formState } = form;
  const { errors } = formState;
  return (
    <>
      <Field
        label="System prompt"
        htmlFor="systemPrompt"
        error={errors.systemPrompt}
        hint={`Optional; prepended to every request. Up to ${count(LIMITS.systemPromptLength)} characters.`}
      >
        <textarea
          id="systemPrompt"
          rows={5}
          {...invalid('systemPrompt', errors.systemPrompt)}
          {...register('systemPrompt')}
        />
      </Field>
      <div className="row three">
        <Field
          label="Temperature"
          htmlFor="temperature"
          error={errors.temperature}
          hint="0 to 2: 0 is deterministic, 2 most random. Blank: the model's default."
        >
          <NumberInput form={form} name="temperature" error={errors.temperature} min={0} max={2} />
        </Field>
        <Field
          label="Max tokens"
          htmlFor="maxTokens"
          error={errors.maxTokens}
          hint={`A whole number, 1 to ${count(LIMITS.maxTokens)}: the longest answer.`}
        >
          <NumberInput
            form={form}
            name="maxTokens"
            error={errors.maxTokens}
            step="1"
            min={1}
            max={LIMITS.maxTokens}
          />
        </Field>
        <Field
          label="Top P"
          htmlFor="topP"
          error={errors.topP}
          hint="0 to 1: nucleus sampling; lower is more focused."
        >
          <NumberInput form={form} name="topP" error={errors.topP} min={0} max={1} />
        </Field>
      </div>
    </>
  );
}

/** Whether a request may set its own model, temperature, max tokens or top P. */
export function OverridePermissionsField({ form }: { form: GateFormApi }) {
  const { register, formState, control } = form;
  const { errors } = formState;
  const overrideMode = useWatch({ control, name: 'overrideMode' });
  return (
    <fieldset className="choices" aria-describedby={errors.overrideMode ? 'overrideMode-error' : undefined}>
      <legend>Client overrides</legend>
      <p className="hint">
        Whether a request may set its own model, temperature, max tokens or top P. An override that is not
        allowed is ignored, logged, and named in the x-gatehouse-ignored-overrides response header.
      </p>
      <div className="radio-row">
        {(
          [
            ['none', 'None: the gate decides'],
            ['all', 'All four'],
            ['fields', 'Only these'],
          ] as const
        ).map(([value, label]) => (
          <label key={value} className="choice">
            <input type="radio" className="check" value={value} {...register('overrideMode')} /> {label}
          </label>
        ))}
      </div>
      <div className="radio-row indent">
        {OVERRIDABLE_FIELDS.map((field) => (
          <label key={field} className={overrideMode === 'fields' ? 'choice' : 'choice muted'}>
            <input
              type="checkbox"
              className="check"
              {...register(`overrideFields.${field}`)}
              disabled={overrideMode !== 'fields'}
            />{' '}
            Override {overrideLabels[field]}
          </label>
        ))}
      </div>
      {errors.overrideMode?.message && (
        <p className="field-error" id="overrideMode-error" role="alert">
          {errors.overrideMode.message}
        </p>
      )}
    </fieldset>
  );
}

/** Structured output: on or off, its format, and the JSON schema with its parse errors as you type. */
export function StructuredOutputFields({ form }: { form: GateFormApi }) {
  const { register, formState, control } = form;
  const { errors } = formState;
  const [responseFormatType, schemaText] = useWatch({
    control,
    name: ['responseFormatType', 'responseFormatSchema'],
  });
  // Shown while typing; the submit check reports the same problem on the field.
  const schemaProblem = jsonProblem(schemaText);
  const schemaError =
    errors.responseFormatSchema ?? (schemaProblem ? { message: sentence(schemaProblem) } : undefined);
  return (
    <>
      <Toggle
        id="responseFormatEnabled"
        label="Enable structured output"
        hint="Native JSON schema where the provider supports it; otherwise the schema goes into the system prompt. The answer is checked against it either way."
      >
        <input
          id="responseFormatEnabled"
          type="checkbox"
          className="check"
          {...register('responseFormatEnabled')}
        />
      </Toggle>
      <Field label="Response format" htmlFor="responseFormatType" error={errors.responseFormatType}>
        <select
          id="responseFormatType"
          {...invalid('responseFormatType', errors.responseFormatType)}
          {...register('responseFormatType')}
        >
          {RESPONSE_FORMAT_TYPES.map((type) => (
            <option key={type} value={type}>
              {responseFormatLabels[type]}
            </option>
          ))}
        </select>
      </Field>
      <Field
        label="JSON schema"
        htmlFor="responseFormatSchema"
        error={schemaError}
        hint={
          responseFormatType === 'json_schema'
            ? 'A JSON object; required for the JSON schema format.'
            : 'A JSON object; used by the JSON schema format only.'
        }
      >
        <textarea
          id="responseFormatSchema"
          className="mono"
          rows={12}
          spellCheck={false}
          placeholder='e.g. {"type": "object", "properties": {"answer": {"type": "string"}}}'
          {...invalid('responseFormatSchema', schemaError)}
          {...register('responseFormatSchema')}
        />
      </Field>
    </>
  );
}

export function SpendingFields({ form, children }: { form: GateFormApi; children?: ReactNode }) {
  const { register, formState } = form;
  const { errors } = formState;
  return (
    <>
      <div className="row three">
        <Field
          label="Limit (USD)"
          htmlFor="spendingLimit"
          error={errors.spendingLimit}
          hint={`Per period, 0 to ${count(LIMITS.spendingLimit)}. Blank: no limit.`}
        >
          <NumberInput form={form} name="spendingLimit" error={errors.spendingLimit} min={0} />
        </Field>
        <Field
          label="Period"
          htmlFor="spendingLimitPeriod"
          error={errors.spendingLimitPeriod}
          hint="When spending starts again from zero."
        >
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
          hint="At the limit: alert only warns and lets requests through; block refuses them."
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
      {children}
    </>
  );
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
