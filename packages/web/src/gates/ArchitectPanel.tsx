/**
 * The Architect on the Models & Routing tab: the gate's latest analysis with every figure behind
 * it, Re-analyse (analyseGate) and Apply (the recommendation saved as the page's own save does).
 */
import { readFragment } from 'gql.tada';
import { type ReactNode, useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { MutationErrorFields } from '../forms/mutationErrors.ts';
import { graphql, type ResultOf } from '../graphql.ts';
import { formatCount, formatDateTime, formatMs, formatUsd } from '../logs/format.ts';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { TableWrap } from '../ui/TableWrap.tsx';

/** Excluded models listed open up to this many; more (the catalog can exclude dozens) start collapsed. */
const EXCLUDED_OPEN = 5;

export const TaskAnalysisFields = graphql(`
  fragment TaskAnalysisFields on TaskAnalysis {
    primary
    alternatives
    fallbacks
    reasoning
    readBy
    requiredCapabilities
    windowSince
    windowUntil
    windowScope
    analysedAt
    weights {
      cost
      latency
      quality
    }
    scores {
      model
      total
      cost
      latency
      quality
      reliability
      excludedBecause
      costPerUnit
      costUnit
      costSource
      latencyMs
      latencySource
      qualityScore
      qualityKind
      errorRate
      samples
    }
  }
`);

type TaskAnalysis = ResultOf<typeof TaskAnalysisFields>;
type Score = TaskAnalysis['scores'][number];

const GateAnalysisQuery = graphql(
  `
  query GateAnalysis($id: ID!) {
    gate(id: $id) {
      id
      analysis {
        ...TaskAnalysisFields
      }
    }
  }
`,
  [TaskAnalysisFields],
);

const AnalyseGateMutation = graphql(
  `
  mutation AnalyseGate($id: ID!) {
    analyseGate(id: $id) {
      __typename
      ... on MutationAnalyseGateSuccess {
        data {
          gate {
            id
            analysis {
              ...TaskAnalysisFields
            }
          }
        }
      }
      ...MutationErrorFields
    }
  }
`,
  [TaskAnalysisFields, MutationErrorFields],
);

/** The gate's models as stored, which Apply would replace. */
export type CurrentModels = { model: string; fallbackModels: readonly string[]; routingStrategy: string };

export function ArchitectPanel({
  gateId,
  active,
  current,
  onApply,
}: {
  gateId: string;
  /** Whether the tab shows: the analysis is read only then. */
  active: boolean;
  current: CurrentModels;
  /** Saves the recommended models as the page's Save does; resolves to whether it saved. */
  onApply: (model: string, fallbackModels: string[]) => Promise<boolean>;
}) {
  const [{ data, fetching, error }, refetch] = useQuery({
    query: GateAnalysisQuery,
    variables: { id: gateId },
    requestPolicy: 'cache-and-network',
    pause: !active,
  });
  const [{ fetching: analysing }, analyseGate] = useMutation(AnalyseGateMutation);
  const [problem, setProblem] = useState<string | null>(null);
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const analysis = data?.gate?.analysis ? readFragment(TaskAnalysisFields, data.gate.analysis) : null;

  const analyse = async () => {
    setProblem(null);
    const result = await analyseGate({ id: gateId });
    const outcome = result.data?.analyseGate;
    if (outcome?.__typename === 'MutationAnalyseGateSuccess') {
      reload();
      return;
    }
    setProblem(
      (outcome && 'message' in outcome ? outcome.message : undefined) ??
        result.error?.graphQLErrors[0]?.message ??
        'The gate could not be analysed; try again.',
    );
  };

  return (
    <section className="architect" aria-labelledby="architect-heading">
      <div className="section-header">
        <h3 id="architect-heading">Architect’s recommendation</h3>
        <button type="button" className="button subtle" onClick={analyse} disabled={analysing || !data}>
          {analysing ? 'Analysing…' : analysis ? 'Re-analyse' : 'Analyse'}
        </button>
      </div>
      {!data && fetching && <Loading what="the Architect’s analysis" />}
      {error && !data && <ErrorBanner error={error} onRetry={reload} />}
      {problem && (
        <div className="banner error" role="alert">
          {problem}
        </div>
      )}
      {data && !analysis && (
        <p className="empty-line">
          Not analysed yet: Analyse reads the description, the catalog and this gate’s traffic and recommends
          models.
        </p>
      )}
      {analysis && <AnalysisView analysis={analysis} current={current} onApply={onApply} />}
    </section>
  );
}

function AnalysisView({
  analysis,
  current,
  onApply,
}: {
  analysis: TaskAnalysis;
  current: CurrentModels;
  onApply: (model: string, fallbackModels: string[]) => Promise<boolean>;
}) {
  const passing = analysis.scores.filter((s) => !s.excludedBecause);
  const excluded = analysis.scores.filter((s) => s.excludedBecause);
  return (
    <>
      <AnalysisSummary analysis={analysis} />
      {analysis.primary ? (
        <ApplyRecommendation
          primary={analysis.primary}
          fallbacks={analysis.fallbacks}
          current={current}
          onApply={onApply}
        />
      ) : (
        <p className="banner warning">No model passes the filters: loosen a cap or a required capability.</p>
      )}
      {passing.length > 0 && <ScoresTable scores={passing} analysis={analysis} />}
      {excluded.length > 0 && <ExcludedModels scores={excluded} />}
      <details className="architect-reasoning" open>
        <summary>Reasoning</summary>
        <p className="plain-text">{analysis.reasoning}</p>
      </details>
    </>
  );
}

const percent = (x: number) => `${Math.round(x * 100)}%`;

function Fact({ term, children }: { term: string; children: ReactNode }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function AnalysisSummary({ analysis }: { analysis: TaskAnalysis }) {
  const w = analysis.weights;
  return (
    <dl className="summary-list" aria-label="Analysis">
      <Fact term="Recommended">
        <span className="mono">{analysis.primary ?? 'none'}</span>
      </Fact>
      <Fact term="Fallbacks">
        <span className="mono">{listed(analysis.fallbacks)}</span>
      </Fact>
      <Fact term="Weights">
        cost {percent(w.cost)}, latency {percent(w.latency)}, quality {percent(w.quality)}
      </Fact>
      <Fact term="Needs">{analysis.requiredCapabilities.join(', ') || 'no special capability'}</Fact>
      <Fact term="Description read by">
        {analysis.readBy === 'model' ? 'the Architect model' : 'the rules'}
      </Fact>
      <Fact term="Traffic read">
        {analysis.windowScope === 'gate' ? 'this gate' : 'your gates'}, {formatDateTime(analysis.windowSince)}{' '}
        to {formatDateTime(analysis.windowUntil)}
      </Fact>
      <Fact term="Analysed">{formatDateTime(analysis.analysedAt)}</Fact>
    </dl>
  );
}

const listed = (models: readonly string[]) => models.join(', ') || 'none';
const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((model, i) => model === b[i]);

/** What Apply changes, said before it is pressed; nothing to apply when the gate uses these already. */
function ApplyRecommendation({
  primary,
  fallbacks,
  current,
  onApply,
}: {
  primary: string;
  fallbacks: string[];
  current: CurrentModels;
  onApply: (model: string, fallbackModels: string[]) => Promise<boolean>;
}) {
  const [busy, setBusy] = useState(false);
  const modelChanges = current.model !== primary;
  const fallbacksChange = !sameList(current.fallbackModels, fallbacks);
  const changes = [
    modelChanges && (
      <li key="model">
        Primary model: <span className="mono">{current.model}</span> → <span className="mono">{primary}</span>
      </li>
    ),
    fallbacksChange && (
      <li key="fallbacks">
        Fallback models: <span className="mono">{listed(current.fallbackModels)}</span> →{' '}
        <span className="mono">{listed(fallbacks)}</span>
      </li>
    ),
  ].filter(Boolean);
  const apply = async () => {
    setBusy(true);
    await onApply(primary, fallbacks);
    setBusy(false);
  };
  return (
    <div className="architect-apply">
      {changes.length > 0 ? (
        <>
          <p>Apply saves these changes, together with any unsaved change on this page:</p>
          <ul aria-label="Changes Apply makes">{changes}</ul>
          {fallbacksChange && fallbacks.length > 0 && current.routingStrategy === 'SINGLE' && (
            <p className="hint">
              Routing is single: the fallbacks take effect once routing is fallback or round-robin.
            </p>
          )}
        </>
      ) : (
        <p className="muted">The gate already uses the recommended primary and fallback models.</p>
      )}
      <button
        type="button"
        className="button primary"
        onClick={apply}
        disabled={changes.length === 0 || busy}
      >
        {busy ? 'Applying…' : 'Apply'}
      </button>
    </div>
  );
}

const score = (x: number) => x.toFixed(3);

function costFact(s: Score) {
  if (s.costPerUnit === null) return 'unknown';
  return `${formatUsd(s.costPerUnit)} per ${s.costUnit} (${s.costSource})`;
}
function latencyFact(s: Score) {
  return s.latencyMs === null ? 'unknown' : `${formatMs(s.latencyMs)} (${s.latencySource})`;
}
function qualityFact(s: Score) {
  return s.qualityScore === null ? `unknown (${s.qualityKind})` : `${s.qualityScore}/100 (${s.qualityKind})`;
}
function errorFact(s: Score) {
  if (s.errorRate === null) return 'no traffic seen';
  return `${Math.round(s.errorRate * 1000) / 10}% of ${formatCount(s.samples)} attempts`;
}

function ScoresTable({ scores, analysis }: { scores: Score[]; analysis: TaskAnalysis }) {
  const role = (model: string) =>
    model === analysis.primary ? 'recommended' : analysis.fallbacks.includes(model) ? 'fallback' : null;
  return (
    <TableWrap label="Model scores">
      <table className="table compact" aria-label="Model scores">
        <thead>
          <tr>
            <th>Model</th>
            <th className="numeric">Total</th>
            <th className="numeric">Cost</th>
            <th className="numeric">Latency</th>
            <th className="numeric">Quality</th>
            <th className="numeric">Reliability</th>
            <th>Cost per unit</th>
            <th>Latency</th>
            <th>Quality</th>
            <th>Errors</th>
          </tr>
        </thead>
        <tbody>
          {scores.map((s) => (
            <tr key={s.model}>
              <td data-label="Model">
                <span className="mono">{s.model}</span>
                {role(s.model) && (
                  <>
                    {' '}
                    <span className={role(s.model) === 'recommended' ? 'badge ok' : 'badge neutral'}>
                      {role(s.model)}
                    </span>
                  </>
                )}
              </td>
              <td data-label="Total score" className="numeric strong">
                {score(s.total)}
              </td>
              <td data-label="Cost score" className="numeric">
                {score(s.cost)}
              </td>
              <td data-label="Latency score" className="numeric">
                {score(s.latency)}
              </td>
              <td data-label="Quality score" className="numeric">
                {score(s.quality)}
              </td>
              <td data-label="Reliability score" className="numeric">
                {score(s.reliability)}
              </td>
              <td data-label="Cost per unit">{costFact(s)}</td>
              <td data-label="Latency">{latencyFact(s)}</td>
              <td data-label="Quality">{qualityFact(s)}</td>
              <td data-label="Errors">{errorFact(s)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="hint">
        Scores are 0 to 1 among the models that pass the filters; the total is the weighted sum times
        reliability.
      </p>
    </TableWrap>
  );
}

function ExcludedModels({ scores }: { scores: Score[] }) {
  return (
    <details className="architect-excluded" open={scores.length <= EXCLUDED_OPEN}>
      <summary>
        {scores.length === 1 ? '1 model excluded' : `${formatCount(scores.length)} models excluded`}
      </summary>
      <ul aria-label="Excluded models">
        {scores.map((s) => (
          <li key={s.model}>
            <span className="mono">{s.model}</span>: {s.excludedBecause}
          </li>
        ))}
      </ul>
    </details>
  );
}
