import { useQuery } from 'urql';
import { Link } from 'wouter';
import { graphql } from '../graphql.ts';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { TableWrap } from '../ui/TableWrap.tsx';
import { DetachableRow, useDetachSubGate } from './DetachRow.tsx';

const GateConnectionsQuery = graphql(`
  query GateConnections($id: ID!) {
    gate(id: $id) {
      id
      connections {
        role
        description
        agentGate {
          id
          name
        }
      }
    }
  }
`);

/** The Connections tab: the agent gates that use this gate as a sub-gate, each with Detach. */
export function Connections({ gateId, active }: { gateId: string; active: boolean }) {
  const [{ data, fetching, error }, refetch] = useQuery({
    query: GateConnectionsQuery,
    variables: { id: gateId },
    requestPolicy: 'cache-and-network',
    pause: !active,
  });
  const detachSubGate = useDetachSubGate(() => refetch({ requestPolicy: 'network-only' }));
  const connections = data?.gate?.connections ?? [];

  const detach = (agentGateId: string) => detachSubGate(agentGateId, gateId);

  return (
    <section className="connections">
      <h2>Used by agent gates</h2>
      {!data && fetching && <Loading what="the agent gates using this gate" />}
      {error && !data && (
        <ErrorBanner error={error} onRetry={() => refetch({ requestPolicy: 'network-only' })} />
      )}
      {data && connections.length === 0 && (
        <p className="empty-line">No agent gate uses this gate as a sub-gate.</p>
      )}
      {connections.length > 0 && (
        <TableWrap label="Agent gates using this gate">
          <table className="table">
            <thead>
              <tr>
                <th>Agent gate</th>
                <th>Role</th>
                <th>Description</th>
                <th>
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {connections.map((connection) => (
                <DetachableRow
                  key={`${connection.agentGate.id}/${connection.role}`}
                  columns={3}
                  what={
                    <>
                      this gate from <strong>{connection.agentGate.name}</strong> (role{' '}
                      <span className="mono">{connection.role}</span>)
                    </>
                  }
                  onDetach={() => detach(connection.agentGate.id)}
                  cells={
                    <>
                      <td data-label="Agent gate">
                        <span className="badge info">AGENT</span>{' '}
                        <Link href={`/gates/${connection.agentGate.id}`}>{connection.agentGate.name}</Link>
                      </td>
                      <td data-label="Role" className="mono">
                        {connection.role}
                      </td>
                      <td data-label="Description">
                        {connection.description ?? <span className="muted">None</span>}
                      </td>
                    </>
                  }
                />
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <p className="muted">
        An agent gate lists its sub-gates on its own Sub-Gates tab; detaching here is the same as detaching
        there.
      </p>
    </section>
  );
}
