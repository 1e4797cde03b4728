/**
 * Basic Info's "Suggest a clearer description": the Architect reads the description as it stands
 * in the form (suggestModels, which stores nothing) and offers its enhanced one beside it; "Use
 * this" puts it in the form, which the page's Save then keeps.
 */
import { useState } from 'react';
import { useWatch } from 'react-hook-form';
import { useMutation } from 'urql';
import { MutationErrorFields } from '../forms/mutationErrors.ts';
import { graphql } from '../graphql.ts';
import { toEnum } from '../graphqlEnums.ts';
import type { GateFormApi } from './fields/controls.tsx';

const SuggestDescriptionMutation = graphql(
  `
  mutation SuggestDescription($input: SuggestionInput!) {
    suggestModels(input: $input) {
      __typename
      ... on MutationSuggestModelsSuccess {
        data {
          enhancedDescription
        }
      }
      ...MutationErrorFields
    }
  }
`,
  [MutationErrorFields],
);

export function DescriptionSuggestion({ form }: { form: GateFormApi }) {
  const [description, taskType, taskSubtype] = useWatch({
    control: form.control,
    name: ['description', 'taskType', 'taskSubtype'],
  });
  const [{ fetching }, suggest] = useMutation(SuggestDescriptionMutation);
  // The suggestion with the description it was made from: an edit since then makes it stale.
  const [offer, setOffer] = useState<{ from: string; text: string } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const current = description.trim();

  const ask = async () => {
    setProblem(null);
    setOffer(null);
    const result = await suggest({
      input: {
        description: current,
        taskType: toEnum(taskType),
        taskSubtype: taskSubtype === '' ? null : toEnum(taskSubtype),
        enableDescriptionEnhancement: true,
      },
    });
    const outcome = result.data?.suggestModels;
    if (outcome?.__typename === 'MutationSuggestModelsSuccess' && outcome.data.enhancedDescription) {
      setOffer({ from: current, text: outcome.data.enhancedDescription });
      return;
    }
    const issues = outcome && 'issues' in outcome ? (outcome.issues ?? []) : [];
    setProblem(
      issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ') ||
        (outcome && 'message' in outcome ? outcome.message : undefined) ||
        result.error?.graphQLErrors[0]?.message ||
        'No description could be suggested; try again.',
    );
  };

  const use = () => {
    if (!offer) return;
    form.setValue('description', offer.text, { shouldDirty: true, shouldValidate: true });
    setOffer(null);
  };

  const shown = offer && offer.from === current ? offer : null;
  return (
    <div className="description-suggestion">
      <div className="actions start">
        <button type="button" className="button subtle" onClick={ask} disabled={fetching || current === ''}>
          {fetching ? 'Reading the description…' : 'Suggest a clearer description'}
        </button>
        {current === '' && <span className="hint">Write what the gate is for first.</span>}
      </div>
      {problem && (
        <p className="field-error" role="alert">
          {problem}
        </p>
      )}
      {shown && (
        <section className="row" aria-label="Suggested description">
          <div>
            <h4>Current</h4>
            <p className="plain-text">{shown.from}</p>
          </div>
          <div>
            <h4>Suggested by the Architect</h4>
            <p className="plain-text">{shown.text}</p>
            {shown.text === shown.from ? (
              <p className="muted">The Architect has nothing to add.</p>
            ) : (
              <div className="actions start">
                <button type="button" className="button primary" onClick={use}>
                  Use this
                </button>
                <button type="button" className="button subtle" onClick={() => setOffer(null)}>
                  Keep mine
                </button>
              </div>
            )}
          </div>
        </section>
      )}
    </div>
  );
}
