import { useEffect, useState } from 'react';
import { useWatch } from 'react-hook-form';
import { useQuery } from 'urql';
import { graphql, type VariablesOf } from '../graphql.ts';
import { toEnum } from '../graphqlEnums.ts';
import type { GateFormApi } from './fields/controls.tsx';

const RequestWorstCaseQuery = graphql(`
  query RequestWorstCase(
    $taskType: TaskType!
    $model: String!
    $fallbackModels: [String!]
    $maxTokens: Int
    $systemPrompt: String
  ) {
    requestWorstCase(
      taskType: $taskType
      model: $model
      fallbackModels: $fallbackModels
      maxTokens: $maxTokens
      systemPrompt: $systemPrompt
    )
  }
`);

/** How long the form must rest before it asks: typing a prompt asks once, not per key. */
export const WORST_CASE_DEBOUNCE_MS = 300;

/** `value`, once it has not changed for `ms`. */
function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/**
 * One request's worst case (USD) for the form's settings as they stand, saved or not: the server
 * answers by the rule a saved gate's requestWorstCaseUsd follows, asked as the task type, models,
 * max tokens and system prompt change. A number, null when the task type has none, undefined
 * while unknown (no model yet, settings the server refuses, no answer).
 */
export function useRequestWorstCase(form: GateFormApi): number | null | undefined {
  const [taskType, model, fallbackModels, maxTokensText, systemPrompt] = useWatch({
    control: form.control,
    name: ['taskType', 'model', 'fallbackModels', 'maxTokens', 'systemPrompt'],
  });
  const maxTokens = maxTokensText.trim() === '' ? null : Number(maxTokensText);
  const key = JSON.stringify({
    taskType: toEnum(taskType),
    model: model.trim(),
    fallbackModels: fallbackModels.map((f) => f.model.trim()).filter((m) => m !== ''),
    maxTokens,
    systemPrompt: systemPrompt === '' ? null : systemPrompt,
  });
  const settled = useDebounced(key, WORST_CASE_DEBOUNCE_MS);
  const variables = JSON.parse(settled) as VariablesOf<typeof RequestWorstCaseQuery>;
  const askable =
    variables.model !== '' && (variables.maxTokens == null || Number.isInteger(variables.maxTokens));
  const [result] = useQuery({ query: RequestWorstCaseQuery, variables, pause: !askable });
  // The last answer stays while the next is asked, so the figure does not flicker as one types.
  const [answer, setAnswer] = useState<number | null | undefined>(undefined);
  useEffect(() => {
    if (!askable || result.error) setAnswer(undefined);
    else if (!result.fetching && result.data) setAnswer(result.data.requestWorstCase);
  }, [askable, result]);
  return answer;
}
