import { type ReactNode, useState } from 'react';
import { graphql } from '../graphql.ts';

export const DetachSubGateMutation = graphql(`
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
  const [confirming, setConfirming] = useState(false);
  const [detaching, setDetaching] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);

  const detach = async () => {
    setDetaching(true);
    const failure = await onDetach();
    setDetaching(false);
    setProblem(failure);
    if (!failure) setConfirming(false);
  };

  return (
    <>
      <tr>
        {cells}
        <td className="row-actions">
          {!confirming && (
            <button type="button" className="button subtle" onClick={() => setConfirming(true)}>
              Detach
            </button>
          )}
        </td>
      </tr>
      {confirming && (
        <tr className="confirm-row">
          <td colSpan={columns + 1}>
            <div className="confirm" role="alertdialog" aria-label="Confirm detach">
              <span>Detach {what}? Requests naming its role stop reaching it; the gate itself stays.</span>
              <span className="confirm-actions">
                <button
                  type="button"
                  className="button subtle"
                  onClick={() => setConfirming(false)}
                  disabled={detaching}
                >
                  Cancel
                </button>
                <button type="button" className="button danger" onClick={detach} disabled={detaching}>
                  {detaching ? 'Detaching…' : 'Yes, detach'}
                </button>
              </span>
              {problem && (
                <p className="field-error" role="alert">
                  {problem}
                </p>
              )}
            </div>
          </td>
        </tr>
      )}
    </>
  );
}
