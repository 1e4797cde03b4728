import { readFragment } from 'gql.tada';
import { useQuery } from 'urql';
import { Link, useParams, useSearchParams } from 'wouter';
import { graphql } from '../graphql.ts';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { useTitle } from '../ui/useTitle.ts';
import { GateEditor } from './GateEditor.tsx';
import { GateDetail } from './gateDetail.ts';
import { tabFromSearch } from './gateEdit.ts';

const GatePageQuery = graphql(
  `
  query GatePage($id: ID!) {
    gate(id: $id) {
      ...GateDetail
    }
  }
`,
  [GateDetail],
);

/** The gate the URL names, in tabs (`?tab=routing`); loads it, then hands it to the editor. */
export function GatePage() {
  const { id = '' } = useParams<{ id: string }>();
  const [search, setSearch] = useSearchParams();
  // Spending moves with every request through the gate: ask the server each time the page opens.
  const [{ data, fetching, error }, refetch] = useQuery({
    query: GatePageQuery,
    variables: { id },
    requestPolicy: 'cache-and-network',
  });
  const gate = data?.gate ? readFragment(GateDetail, data.gate) : null;
  useTitle(gate ? gate.name : data ? 'Gate not found' : 'Gate');

  if (!data && fetching) return <Loading what="the gate" />;
  if (error && !data) {
    return (
      <section className="page">
        <ErrorBanner error={error} onRetry={() => refetch({ requestPolicy: 'network-only' })} />
      </section>
    );
  }
  if (!gate) {
    return (
      <section className="page">
        <p className="breadcrumb">
          <Link href="/gates">Gates</Link>
        </p>
        <h1>Gate not found</h1>
        <p>
          None of your gates has this id; it may have been deleted.{' '}
          <Link href="/gates">Back to your gates</Link>.
        </p>
      </section>
    );
  }
  const tab = tabFromSearch(search.get('tab'), gate.gateType === 'AGENT');
  return (
    <GateEditor
      key={gate.id}
      gate={gate}
      tab={tab}
      onTabChange={(next) => setSearch({ tab: next }, { replace: true })}
      created={search.get('created') === '1'}
    />
  );
}
