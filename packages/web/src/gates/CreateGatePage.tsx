import type { GateCreate } from '@gatehouse/server/rules/gate';
import { useForm } from 'react-hook-form';
import { useMutation } from 'urql';
import { Link, useLocation } from 'wouter';
import { graphql } from '../graphql.ts';
import { GateForm } from './GateForm.tsx';
import { emptyGateForm, type GateFormValues, gateFormResolver } from './gateForm.ts';
import { showServerIssues } from './serverIssues.ts';
import { useTaskModels } from './useTaskModels.ts';

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
  const { models, modelsState } = useTaskModels(form);
  const [, createGate] = useMutation(CreateGateMutation);
  const [, navigate] = useLocation();

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
      case 'ValidationError':
      case 'ConflictError': {
        const issues =
          outcome.__typename === 'ValidationError'
            ? outcome.issues
            : [{ path: outcome.field ?? '', message: outcome.message }];
        const first = showServerIssues(form, issues);
        if (first) form.setFocus(first);
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
        models={models}
        modelsState={modelsState}
        submitLabel="Create gate"
        onCancel={() => navigate('/gates')}
      />
    </section>
  );
}
