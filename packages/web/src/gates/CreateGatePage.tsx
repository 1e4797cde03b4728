import type { GateCreate } from '@gatehouse/rules/gate';
import { useForm } from 'react-hook-form';
import { useMutation } from 'urql';
import { Link, useLocation } from 'wouter';
import { showMutationErrors } from '../forms/formErrors.ts';
import { MutationErrorFields } from '../forms/mutationErrors.ts';
import { graphql } from '../graphql.ts';
import { gateToGraphQL } from '../graphqlEnums.ts';
import { leaveWithoutAsking, useUnsavedChanges } from '../ui/unsavedChanges.ts';
import { useTitle } from '../ui/useTitle.ts';
import { GateForm } from './GateForm.tsx';
import { emptyGateForm, fieldOfIssue, type GateFormValues, gateFormResolver } from './gateForm.ts';
import { useRequestWorstCase } from './useRequestWorstCase.ts';
import { useTaskModels } from './useTaskModels.ts';

const CreateGateMutation = graphql(
  `
  mutation CreateGate($input: GateInput!) {
    createGate(input: $input) {
      __typename
      ... on MutationCreateGateSuccess {
        data {
          id
          name
        }
      }
      ...MutationErrorFields
    }
  }
`,
  [MutationErrorFields],
);

/** Runs the create-gate form: offers the models of the chosen task type, saves, puts errors on fields. */
export function CreateGatePage() {
  useTitle('New gate');
  const form = useForm<GateFormValues, unknown, GateCreate>({
    defaultValues: emptyGateForm,
    resolver: gateFormResolver,
  });
  const { models, modelsState } = useTaskModels(form);
  const worstCaseUsd = useRequestWorstCase(form) ?? null;
  const [, createGate] = useMutation(CreateGateMutation);
  const [, navigate] = useLocation();
  useUnsavedChanges(form.formState.isDirty);

  const onSubmit = async (input: GateCreate) => {
    const result = await createGate({ input: gateToGraphQL(input) });
    const outcome = result.data?.createGate;
    if (outcome?.__typename === 'MutationCreateGateSuccess') {
      // Its page, with its id and a ready request: saved, so nothing is dropped.
      leaveWithoutAsking();
      navigate(`/gates/${outcome.data.id}?created=1`);
      return;
    }
    const first = showMutationErrors(form, outcome, {
      fieldOf: fieldOfIssue,
      unanswered: result.error?.graphQLErrors[0]?.message ?? 'The gate could not be saved; try again.',
    });
    if (first) form.setFocus(first);
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
        worstCaseUsd={worstCaseUsd}
      />
    </section>
  );
}
