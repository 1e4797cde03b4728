import type { FieldError } from 'react-hook-form';
import { useWatch } from 'react-hook-form';
import { type GateFormApi, invalid } from './controls.tsx';

export type ModelOption = { id: string; name: string; provider: string; deprecated: boolean };
export type ModelsState = 'loading' | 'ready' | 'failed';

/**
 * A model choice among the catalog's models of the gate's task type. A value the list lacks (a
 * model gone from the catalog) stays offered, so showing a gate never changes it.
 */
export function ModelSelect({
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

function groupByProvider(models: ModelOption[]): [string, ModelOption[]][] {
  const groups = new Map<string, ModelOption[]>();
  for (const model of models) {
    const group = groups.get(model.provider);
    if (group) group.push(model);
    else groups.set(model.provider, [model]);
  }
  return [...groups.entries()];
}
