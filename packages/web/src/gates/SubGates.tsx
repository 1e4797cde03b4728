import { useForm } from 'react-hook-form';
import { useMutation, useQuery } from 'urql';
import { Link } from 'wouter';
import { showMutationErrors } from '../forms/formErrors.ts';
import { MutationErrorFields } from '../forms/mutationErrors.ts';
import { graphql } from '../graphql.ts';
import { Field } from '../ui/Field.tsx';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { TableWrap } from '../ui/TableWrap.tsx';
import { DetachableRow, useDetachSubGate } from './DetachRow.tsx';
import { invalid } from './fields/controls.tsx';
import {
  emptySubGateForm,
  type SubGateFormValues,
  subGateFieldOfIssue,
  toSubGateInput,
} from './subGateForm.ts';

const GateSubGatesQuery = graphql(`
  query GateSubGates($id: ID!) {
    gate(id: $id) {
      id
      subGates {
        role
        description
        visibleTools
        gate {
          id
          name
        }
      }
    }
    gates(first: 200) {
      edges {
        node {
          id
          name
        }
      }
    }
  }
`);

const AttachSubGateMutation = graphql(
  `
  mutation AttachSubGate($gateId: ID!, $input: SubGateInput!) {
    attachSubGate(gateId: $gateId, input: $input) {
      __typename
      ... on MutationAttachSubGateSuccess {
        data {
          role
        }
      }
      ...MutationErrorFields
    }
  }
`,
  [MutationErrorFields],
);

/** The Sub-Gates tab of an agent gate: its sub-gates with Detach, and a form to attach another. */
export function SubGates({ gateId, active }: { gateId: string; active: boolean }) {
  const [{ data, fetching, error }, refetch] = useQuery({
    query: GateSubGatesQuery,
    variables: { id: gateId },
    requestPolicy: 'cache-and-network',
    pause: !active,
  });
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const detachSubGate = useDetachSubGate(reload);
  const subGates = data?.gate?.subGates ?? [];
  const candidates = (data?.gates.edges ?? []).map((edge) => edge.node).filter((gate) => gate.id !== gateId);

  const detach = (subGateId: string) => detachSubGate(gateId, subGateId);

  return (
    <section className="sub-gates">
      <h2>Sub-gates</h2>
      {!data && fetching && <Loading what="the sub-gates" />}
      {error && !data && <ErrorBanner error={error} onRetry={reload} />}
      {data && subGates.length === 0 && <p className="empty-line">This agent gate has no sub-gates yet.</p>}
      {subGates.length > 0 && (
        <TableWrap label="Sub-gates">
          <table className="table" aria-label="Sub-gates">
            <thead>
              <tr>
                <th>Role</th>
                <th>Gate</th>
                <th>Description</th>
                <th>Visible tools</th>
                <th>
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {subGates.map((subGate) => (
                <DetachableRow
                  key={subGate.role}
                  columns={4}
                  what={
                    <>
                      <strong>{subGate.gate.name}</strong> (role <span className="mono">{subGate.role}</span>)
                      from this gate
                    </>
                  }
                  onDetach={() => detach(subGate.gate.id)}
                  cells={
                    <>
                      <td data-label="Role" className="mono">
                        {subGate.role}
                      </td>
                      <td data-label="Gate">
                        <Link href={`/gates/${subGate.gate.id}`}>{subGate.gate.name}</Link>
                      </td>
                      <td data-label="Description">
                        {subGate.description ?? <span className="muted">None</span>}
                      </td>
                      <td data-label="Visible tools">
                        {subGate.visibleTools === null ? (
                          <span className="muted">Every tool</span>
                        ) : (
                          subGate.visibleTools.join(', ') || <span className="muted">None</span>
                        )}
                      </td>
                    </>
                  }
                />
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {data && <AttachForm gateId={gateId} candidates={candidates} onAttached={reload} />}
    </section>
  );
}

function AttachForm({
  gateId,
  candidates,
  onAttached,
}: {
  gateId: string;
  candidates: { id: string; name: string }[];
  onAttached: () => void;
}) {
  const form = useForm<SubGateFormValues>({ defaultValues: emptySubGateForm });
  const { register, handleSubmit, formState, reset, setFocus } = form;
  const { errors, isSubmitting } = formState;
  const [, attachSubGate] = useMutation(AttachSubGateMutation);

  const onSubmit = async (values: SubGateFormValues) => {
    const result = await attachSubGate({ gateId, input: toSubGateInput(values) });
    const outcome = result.data?.attachSubGate;
    if (outcome?.__typename === 'MutationAttachSubGateSuccess') {
      reset(emptySubGateForm);
      onAttached();
      return;
    }
    const first = showMutationErrors(form, outcome, {
      fieldOf: subGateFieldOfIssue,
      unanswered: result.error?.graphQLErrors[0]?.message ?? 'The sub-gate could not be attached; try again.',
    });
    if (first) setFocus(first);
  };

  if (candidates.length === 0) {
    return <p className="muted">Create another gate to attach it here as a sub-gate.</p>;
  }
  return (
    <form className="form" aria-label="Attach a sub-gate" onSubmit={handleSubmit(onSubmit)} noValidate>
      <h3>Attach a sub-gate</h3>
      {errors.root?.server && (
        <div className="banner error" role="alert">
          {errors.root.server.message}
        </div>
      )}
      <div className="row">
        <Field label="Sub-gate" htmlFor="subGateId" error={errors.subGateId} hint="One of your other gates.">
          <select
            id="subGateId"
            {...invalid('subGateId', errors.subGateId)}
            {...register('subGateId', { required: 'Choose a gate' })}
          >
            <option value="">Choose a gate…</option>
            {candidates.map((gate) => (
              <option key={gate.id} value={gate.id}>
                {gate.name}
              </option>
            ))}
          </select>
        </Field>
        <Field
          label="Role"
          htmlFor="role"
          error={errors.role}
          hint="What x-gatehouse-action names to route here: a-z, 0-9, _ and -."
        >
          <input id="role" autoComplete="off" {...invalid('role', errors.role)} {...register('role')} />
        </Field>
      </div>
      <Field
        label="Sub-gate description"
        htmlFor="subGateDescription"
        error={errors.description}
        hint="Optional: what this step does; a dynamic orchestrator reads it."
      >
        <input
          id="subGateDescription"
          autoComplete="off"
          {...invalid('subGateDescription', errors.description)}
          {...register('description')}
        />
      </Field>
      <Field
        label="Sub-gate visible tools"
        htmlFor="subGateVisibleTools"
        error={errors.visibleTools}
        hint="Comma-separated tool names this step is shown. Blank: every tool."
      >
        <input
          id="subGateVisibleTools"
          autoComplete="off"
          {...invalid('subGateVisibleTools', errors.visibleTools)}
          {...register('visibleTools')}
        />
      </Field>
      <div className="actions start">
        <button type="submit" className="button primary" disabled={isSubmitting}>
          {isSubmitting ? 'Attaching…' : 'Attach sub-gate'}
        </button>
      </div>
    </form>
  );
}
