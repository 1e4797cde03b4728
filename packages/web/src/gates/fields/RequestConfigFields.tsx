/** The Request Config tab: what every request through the gate gets, what it may override, and structured output. */
import { LIMITS, OVERRIDABLE_FIELDS, RESPONSE_FORMAT_TYPES } from '@gatehouse/rules/gate';
import { useWatch } from 'react-hook-form';
import { sentence } from '../../forms/formErrors.ts';
import { formatCount } from '../../logs/format.ts';
import { Field } from '../../ui/Field.tsx';
import { type GateFormValues, jsonProblem } from '../gateForm.ts';
import { type GateFormApi, invalid, NumberField, Toggle } from './controls.tsx';

const responseFormatLabels: Record<GateFormValues['responseFormatType'], string> = {
  text: 'Text',
  json_object: 'JSON object: any valid JSON',
  json_schema: 'JSON schema: validated against the schema below',
};
const overrideLabels: Record<(typeof OVERRIDABLE_FIELDS)[number], string> = {
  model: 'Model',
  temperature: 'Temperature',
  maxTokens: 'Max tokens',
  topP: 'Top P',
};

/** The tab as the gate page shows it. */
export function RequestConfigTab({ form }: { form: GateFormApi }) {
  return (
    <>
      <SamplingFields form={form} />
      <OverridePermissionsField form={form} />
      <div className="subsection">
        <h3>Structured output</h3>
      </div>
      <StructuredOutputFields form={form} />
      <div className="subsection">
        <h3>Other API formats</h3>
      </div>
      <StrictHostedToolsField form={form} />
    </>
  );
}

/**
 * What a request in another family's format (/v1/messages to an OpenAI model, /v1/responses to
 * an Anthropic one) does with hosted tools its model cannot run: left out, or refused.
 */
export function StrictHostedToolsField({ form }: { form: GateFormApi }) {
  return (
    <Toggle
      id="strictHostedTools"
      label="Refuse hosted tools the model cannot run"
      hint="A request in another provider's format (Codex on an Anthropic model, Claude Code on an OpenAI one) may name tools that only that provider runs: web search, tool search, code interpreter, file search, Anthropic's server tools. Off: they are left out, and named in the x-gatehouse-dropped-fields header and the log. On: the request is refused with a 400 naming the tool and the model."
    >
      <input
        id="strictHostedTools"
        type="checkbox"
        className="check"
        {...form.register('strictHostedTools')}
      />
    </Toggle>
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
        hint={`Optional; prepended to every request. Up to ${formatCount(LIMITS.systemPromptLength)} characters.`}
      >
        <textarea
          id="systemPrompt"
          rows={5}
          {...invalid('systemPrompt', errors.systemPrompt)}
          {...register('systemPrompt')}
        />
      </Field>
      <div className="row three">
        <NumberField
          form={form}
          name="temperature"
          label="Temperature"
          hint="0 to 2: 0 is deterministic, 2 most random. Blank: the model's default."
          min={0}
          max={2}
        />
        <NumberField
          form={form}
          name="maxTokens"
          label="Max tokens"
          hint={`A whole number, 1 to ${formatCount(LIMITS.maxTokens)}: the longest answer.`}
          step="1"
          min={1}
          max={LIMITS.maxTokens}
        />
        <NumberField
          form={form}
          name="topP"
          label="Top P"
          hint="0 to 1: nucleus sampling; lower is more focused."
          min={0}
          max={1}
        />
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
