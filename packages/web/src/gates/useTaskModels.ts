import { useEffect, useMemo, useRef } from 'react';
import { useWatch } from 'react-hook-form';
import { useQuery } from 'urql';
import { graphql } from '../graphql.ts';
import { toEnum } from '../graphqlEnums.ts';
import type { GateFormApi } from './fields/controls.tsx';
import type { ModelOption, ModelsState } from './fields/ModelSelect.tsx';

const ModelsForTaskQuery = graphql(`
  query ModelsForTask($taskType: TaskType!) {
    models(taskType: $taskType) {
      id
      name
      provider
      deprecated
      inputPricePerMTok
      outputPricePerMTok
      contextWindow
      unitPrice {
        usd
        per
      }
    }
  }
`);

const ProvidersQuery = graphql(`
  query Providers {
    providers {
      id
      name
      configured
      envVariable
    }
  }
`);

/**
 * The catalog's models for the form's task type. Once the user changes the task type, a model of
 * another type can never be saved: it is dropped, and so is a subtype on a gate that is not chat.
 * Until then the gate's own choices stay as they are, even one the catalog no longer lists.
 */
export function useTaskModels(form: GateFormApi): { models: ModelOption[]; modelsState: ModelsState } {
  const taskType = useWatch({ control: form.control, name: 'taskType' });
  const [models] = useQuery({ query: ModelsForTaskQuery, variables: { taskType: toEnum(taskType) } });
  // Whether a provider is configured is the server's setting: a missing answer only hides the marks.
  const [providers] = useQuery({ query: ProvidersQuery });
  const initialTaskType = useRef(taskType);
  const taskTypeChanged = useRef(false);
  if (taskType !== initialTaskType.current) taskTypeChanged.current = true;

  const offered = models.fetching ? undefined : models.data?.models;
  useEffect(() => {
    if (!taskTypeChanged.current) return;
    if (form.getValues('taskType') !== 'chat' && form.getValues('taskSubtype') !== '') {
      form.setValue('taskSubtype', '', { shouldDirty: true });
    }
    if (!offered) return;
    const ids = new Set(offered.map((model) => model.id));
    const { model, fallbackModels } = form.getValues();
    if (model !== '' && !ids.has(model)) form.setValue('model', '', { shouldDirty: true });
    const kept = fallbackModels.filter((row) => ids.has(row.model));
    if (kept.length !== fallbackModels.length) form.setValue('fallbackModels', kept, { shouldDirty: true });
  }, [offered, form]);

  const withProviders = useMemo(() => {
    const byId = new Map(providers.data?.providers?.map((p) => [p.id, p]));
    return (offered ?? []).map((model) => {
      const p = byId.get(model.provider);
      return {
        ...model,
        providerInfo: p ? { name: p.name, configured: p.configured, envVariable: p.envVariable } : null,
      };
    });
  }, [offered, providers.data]);

  return {
    models: withProviders,
    modelsState: models.error && !offered ? 'failed' : offered ? 'ready' : 'loading',
  };
}
