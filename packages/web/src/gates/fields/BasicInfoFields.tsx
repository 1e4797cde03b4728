/** The Basic Info tab: what the gate is called and says about itself, and its task type. */
import { LIMITS, TASK_ENDPOINTS, TASK_SUBTYPES, TASK_TYPES } from '@gatehouse/rules/gate';
import { useWatch } from 'react-hook-form';
import { formatCount } from '../../logs/format.ts';
import { Field } from '../../ui/Field.tsx';
import { type GateFormApi, invalid, Toggle } from './controls.tsx';

/** The tab as the gate page shows it. */
export function BasicInfoTab({ form }: { form: GateFormApi }) {
  return (
    <>
      <IdentityFields form={form} />
      <AutoEnhanceField form={form} />
      <div className="row">
        <TaskTypeField form={form} />
        <TaskSubtypeField form={form} />
      </div>
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
