/** The Basic Info tab: what the gate is called and says about itself, and its task type. */
import {
  AGENT_MODES,
  GATE_TYPES,
  LIMITS,
  ORCHESTRATIONS,
  TASK_ENDPOINTS,
  TASK_SUBTYPES,
  TASK_TYPES,
} from '@gatehouse/rules/gate';
import type { ReactNode } from 'react';
import { useWatch } from 'react-hook-form';
import { formatCount } from '../../logs/format.ts';
import { Field } from '../../ui/Field.tsx';
import { type GateFormApi, invalid, Toggle } from './controls.tsx';

/** The tab as the gate page shows it; `descriptionSuggestion` (the Architect's offer) goes under the description. */
export function BasicInfoTab({
  form,
  descriptionSuggestion,
}: {
  form: GateFormApi;
  descriptionSuggestion?: ReactNode;
}) {
  const gateType = useWatch({ control: form.control, name: 'gateType' });
  return (
    <>
      <p className="muted">
        Gate type: <strong>{gateType}</strong> (chosen when the gate was created).
      </p>
      <IdentityFields form={form} />
      {descriptionSuggestion}
      <AutoEnhanceField form={form} />
      <div className="row">
        <TaskTypeField form={form} />
        <TaskSubtypeField form={form} />
      </div>
      <AgentFields form={form} />
    </>
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
        hint={`Optional, up to ${formatCount(LIMITS.descriptionLength)} characters: what the gate is for. The Architect reads it to recommend models.`}
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
      hint="On: when you save a changed description, or turn this on, the server replaces the description with the Architect's clearer one (Suggest a clearer description shows it beside yours first). Off: yours changes only when you choose Use this and save."
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
  const taskType = useWatch({ control: form.control, name: 'taskType' });
  const endpoint = TASK_ENDPOINTS[taskType];
  return (
    <Field
      label="Task type"
      htmlFor="taskType"
      error={errors.taskType}
      hint={
        endpoint
          ? `Decides which models the gate may use. Called with POST ${endpoint}.`
          : 'No endpoint calls gates of this type yet: such a gate can be configured, but requests through it are refused.'
      }
    >
      <select id="taskType" {...invalid('taskType', errors.taskType)} {...form.register('taskType')}>
        {TASK_TYPES.map((type) => (
          <option key={type} value={type}>
            {TASK_ENDPOINTS[type] ? type : `${type} (not callable yet)`}
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

/** Standard or agent: chosen when the gate is created. */
export function GateTypeField({ form }: { form: GateFormApi }) {
  const { errors } = form.formState;
  return (
    <Field
      label="Gate type"
      htmlFor="gateType"
      error={errors.gateType}
      hint="An agent gate groups the requests of multi-turn agent runs into sessions with their own budget, and can route them to sub-gates."
    >
      <select id="gateType" {...invalid('gateType', errors.gateType)} {...form.register('gateType')}>
        {GATE_TYPES.map((type) => (
          <option key={type} value={type}>
            {type}
          </option>
        ))}
      </select>
    </Field>
  );
}

/** The settings only an agent gate has; nothing on a standard gate. */
export function AgentFields({ form }: { form: GateFormApi }) {
  const { register, formState, control } = form;
  const { errors } = formState;
  const gateType = useWatch({ control, name: 'gateType' });
  const agentMode = useWatch({ control, name: 'agentMode' });
  if (gateType !== 'agent') return null;
  return (
    <fieldset className="agent-fields">
      <legend>Agent settings</legend>
      <div className="row">
        <Field
          label="Agent mode"
          htmlFor="agentMode"
          error={errors.agentMode}
          hint="Observability logs each session as it goes; orchestrated also routes each request to a sub-gate."
        >
          <select id="agentMode" {...invalid('agentMode', errors.agentMode)} {...register('agentMode')}>
            {AGENT_MODES.map((mode) => (
              <option key={mode} value={mode}>
                {mode}
              </option>
            ))}
          </select>
        </Field>
        {agentMode === 'orchestrated' && (
          <Field
            label="Orchestration"
            htmlFor="orchestration"
            error={errors.orchestration}
            hint="Static: the x-gatehouse-action header names the sub-gate's role. Dynamic: this gate's model picks it."
          >
            <select
              id="orchestration"
              {...invalid('orchestration', errors.orchestration)}
              {...register('orchestration')}
            >
              {ORCHESTRATIONS.map((orchestration) => (
                <option key={orchestration} value={orchestration}>
                  {orchestration}
                </option>
              ))}
            </select>
          </Field>
        )}
      </div>
      <div className="row">
        <Field
          label="Session spending limit (USD)"
          htmlFor="sessionSpendingLimit"
          error={errors.sessionSpendingLimit}
          hint="What one session may spend; a request past it gets 402. Blank: no limit."
        >
          <input
            id="sessionSpendingLimit"
            type="number"
            step="any"
            min={0}
            inputMode="decimal"
            {...invalid('sessionSpendingLimit', errors.sessionSpendingLimit)}
            {...register('sessionSpendingLimit')}
          />
        </Field>
        <Field
          label="Session idle minutes"
          htmlFor="sessionIdleMinutes"
          error={errors.sessionIdleMinutes}
          hint={`Minutes without a request after which a session shows as idle; 1 to ${formatCount(LIMITS.sessionIdleMinutes)}.`}
        >
          <input
            id="sessionIdleMinutes"
            type="number"
            step="1"
            min={1}
            inputMode="numeric"
            {...invalid('sessionIdleMinutes', errors.sessionIdleMinutes)}
            {...register('sessionIdleMinutes')}
          />
        </Field>
        <Field
          label="Max requests per session"
          htmlFor="maxRequestsPerSession"
          error={errors.maxRequestsPerSession}
          hint="A session past it is stopped as a runaway. Blank: no limit."
        >
          <input
            id="maxRequestsPerSession"
            type="number"
            step="1"
            min={1}
            inputMode="numeric"
            {...invalid('maxRequestsPerSession', errors.maxRequestsPerSession)}
            {...register('maxRequestsPerSession')}
          />
        </Field>
      </div>
      <Field
        label="Visible tools"
        htmlFor="visibleTools"
        error={errors.visibleTools}
        hint="Comma-separated tool names the model is shown; others never reach the provider. Blank: every tool."
      >
        <input
          id="visibleTools"
          autoComplete="off"
          {...invalid('visibleTools', errors.visibleTools)}
          {...register('visibleTools')}
        />
      </Field>
    </fieldset>
  );
}
