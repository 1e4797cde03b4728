import type { GateCreate } from '@gatehouse/server/rules/gate';
import { useEffect } from 'react';
import { useForm, useWatch } from 'react-hook-form';
import { useMutation, useQuery } from 'urql';
import { Link, useLocation } from 'wouter';
import { graphql } from '../graphql.ts';
import { GateForm } from './GateForm.tsx';
import { emptyGateForm, fieldOfIssue, type GateFormValues, gateFormResolver } from './gateForm.ts';

const ModelsForTaskQuery = graphql(`
  query ModelsForTask($taskType: String!) {
    models(taskType: $taskType) {
      id
      name
      provider
      deprecated
    }
  }
`);

const CreateGateMutation = graphql(`
  mutation CreateGate($input: GateInput!) {
    createGate(input: $input) {
      __typename
      ... on MutationCreateGateSuccess {
        data {
          id
          name
        }
      }
      ... on Error {
        message
      }
      ... on ValidationError {
        issues {
          path
          message
        }
      }
      ... on ConflictError {
        field
      }
    }
  }
`);

/** Runs the create-gate form: offers the models of the chosen task type, saves, puts errors on fields. */
export function CreateGatePage() {
  const form = useForm<GateFormValues, unknown, GateCreate>({
    defaultValues: emptyGateForm,
    resolver: gateFormResolver,
  });
  const taskType = useWatch({ control: form.control, name: 'taskType' });
  const [models] = useQuery({ query: ModelsForTaskQuery, variables: { taskType } });
  const [, createGate] = useMutation(CreateGateMutation);
  const [, navigate] = useLocation();

  // A model of another task type can never be saved: drop it when the task type changes.
  const offered = models.fetching ? undefined : models.data?.models;
  useEffect(() => {
    if (!offered) return;
    const ids = new Set(offered.map((model) => model.id));
    const { model, fallbackModels } = form.getValues();
    if (model !== '' && !ids.has(model)) form.setValue('model', '');
    const kept = fallbackModels.filter((row) => ids.has(row.model));
    if (kept.length !== fallbackModels.length) form.setValue('fallbackModels', kept);
  }, [offered, form]);

  const onSubmit = async (input: GateCreate) => {
    const result = await createGate({ input });
    const outcome = result.data?.createGate;
    if (!outcome) {
      form.setError('root.server', {
        message: result.error?.graphQLErrors[0]?.message ?? 'The gate could not be saved; try again.',
      });
      return;
    }
    switch (outcome.__typename) {
      case 'MutationCreateGateSuccess':
        navigate('/gates');
        return;
      case 'ValidationError': {
        const elsewhere: string[] = [];
        outcome.issues.forEach((issue, i) => {
          const target = fieldOfIssue(issue);
          if (target)
            form.setError(
              target.field,
              { type: 'server', message: target.message },
              { shouldFocus: i === 0 },
            );
          else elsewhere.push(issue.path ? `${issue.path}: ${issue.message}` : issue.message);
        });
        if (elsewhere.length > 0) form.setError('root.server', { message: elsewhere.join('; ') });
        return;
      }
      case 'ConflictError': {
        const target = outcome.field ? fieldOfIssue({ path: outcome.field, message: outcome.message }) : null;
        if (target)
          form.setError(target.field, { type: 'server', message: target.message }, { shouldFocus: true });
        else form.setError('root.server', { message: outcome.message });
        return;
      }
      default:
        form.setError('root.server', { message: outcome.message });
    }
  };

  return (
    <section className="page narrow">
      <p className="breadcrumb">
        <Link href="/gates">Gates</Link> / New
      </p>
      <h1>Create a gate</h1>
      <p className="muted">
        A gate is what applications call: it picks the model, its fallbacks and parameters, and keeps spending
        within its limit.
      </p>
      <GateForm
        form={form}
        onSubmit={onSubmit}
        models={models.data?.models ?? []}
        modelsState={models.error ? 'failed' : offered ? 'ready' : 'loading'}
        submitLabel="Create gate"
        onCancel={() => navigate('/gates')}
      />
    </section>
  );
}
