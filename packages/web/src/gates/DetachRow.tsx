import type { ReactNode } from 'react';
import { useMutation } from 'urql';
import { graphql } from '../graphql.ts';
import { AskButton, ConfirmRow, useConfirmation } from '../ui/Confirm.tsx';

const DetachSubGateMutation = graphql(`
  mutation DetachSubGate($gateId: ID!, $subGateId: ID!) {
    detachSubGate(gateId: $gateId, subGateId: $subGateId) {
      __typename
      ... on MutationDetachSubGateSuccess {
        data
      }
      ... on Error {
        message
      }
    }
  }
`);

/**
 * Detaches a sub-gate from an agent gate; resolves to null once done (after `onDetached`), or to
 * the message to show when it could not.
 */
export function useDetachSubGate(onDetached: () => void) {
  const [, detachSubGate] = useMutation(DetachSubGateMutation);
  return async (gateId: string, subGateId: string): Promise<string | null> => {
    const result = await detachSubGate({ gateId, subGateId });
    const outcome = result.data?.detachSubGate;
    if (outcome?.__typename === 'MutationDetachSubGateSuccess') {
      onDetached();
      return null;
    }
    return (
      (outcome && 'message' in outcome ? outcome.message : undefined) ??
      result.error?.graphQLErrors[0]?.message ??
      'The sub-gate could not be detached; try again.'
    );
  };
}

/**
 * One sub-gate link in a table, with Detach asking for confirmation in a row below it before
 * `onDetach` runs (which resolves to a message when it could not).
 */
export function DetachableRow({
  cells,
  columns,
  what,
  onDetach,
}: {
  cells: ReactNode;
  columns: number;
  /** "Detach <what>?": the link in words, for the confirmation. */
  what: ReactNode;
  onDetach: () => Promise<string | null>;
}) {
  const confirmation = useConfirmation(onDetach);
  return (
    <>
      <tr>
        {cells}
        <td className="row-actions">
          <AskButton confirmation={confirmation}>Detach</AskButton>
        </td>
      </tr>
      <ConfirmRow
        columns={columns + 1}
        confirmation={confirmation}
        label="Confirm detach"
        question={<>Detach {what}? Requests naming its role stop reaching it; the gate itself stays.</>}
        action="Yes, detach"
        busyAction="Detaching…"
      />
    </>
  );
}
