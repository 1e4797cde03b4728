import { useEffect, useState } from 'react';
import { useWatch } from 'react-hook-form';
import { useQuery } from 'urql';
import { graphql, type VariablesOf } from '../graphql.ts';
import { toEnum } from '../graphqlEnums.ts';
import type { GateFormApi } from './fields/controls.tsx';
import { jsonProblem } from './gateForm.ts';

const RequestWorstCaseQuery = graphql(`
  query RequestWorstCase(
    $taskType: TaskType!
    $model: String!
    $fallbackModels: [String!]
    $maxTokens: Int
    $systemPrompt: String
    $responseFormatEnabled: Boolean
    $responseFormatType: ResponseFormatType
    $responseFormatSchema: JSON
  ) {
    requestWorstCase(
      taskType: $taskType
      model: $model
      fallbackModels: $fallbackModels
      maxTokens: $maxTokens
      systemPrompt: $systemPrompt
      responseFormatEnabled: $responseFormatEnabled
      responseFormatType: $responseFormatType
      responseFormatSchema: $responseFormatSchema
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
 * max tokens, system prompt and response format (its schema is read as prompt) change. A number,
 * null when the task type has none, undefined while unknown (no model yet, a schema that is not
 * JSON yet, settings the server refuses, no answer).
 */
export function useRequestWorstCase(form: GateFormApi): number | null | undefined {
  const [
    taskType,
    model,
    fallbackModels,
    maxTokensText,
    systemPrompt,
    formatEnabled,
    formatType,
    schemaText,
  ] = useWatch({
    control: form.control,
    name: [
      'taskType',
      'model',
      'fallbackModels',
      'maxTokens',
      'systemPrompt',
      'responseFormatEnabled',
      'responseFormatType',
      'responseFormatSchema',
    ],
  });
  const maxTokens = maxTokensText.trim() === '' ? null : Number(maxTokensText);
  const schemaUsed = formatEnabled && formatType === 'json_schema' && schemaText.trim() !== '';
  const schemaReadable = !schemaUsed || jsonProblem(schemaText) === null;
  // Whether the schema reads is part of the key, so the ask waits for the text it was read from.
  const key = JSON.stringify({
    schemaReadable,
    taskType: toEnum(taskType),
    model: model.trim(),
    fallbackModels: fallbackModels.map((f) => f.model.trim()).filter((m) => m !== ''),
    maxTokens,
    systemPrompt: systemPrompt === '' ? null : systemPrompt,
    responseFormatEnabled: formatEnabled,
    responseFormatType: toEnum(formatType),
    responseFormatSchema: schemaUsed && schemaReadable ? JSON.parse(schemaText) : null,
  });
  const settled = useDebounced(key, WORST_CASE_DEBOUNCE_MS);
  const { schemaReadable: readable, ...variables } = JSON.parse(settled) as VariablesOf<
    typeof RequestWorstCaseQuery
  > & { schemaReadable: boolean };
  const askable =
    readable &&
    variables.model !== '' &&
    (variables.maxTokens == null || Number.isInteger(variables.maxTokens));
  const [result] = useQuery({ query: RequestWorstCaseQuery, variables, pause: !askable });
  // The last answer stays while the next is asked, so the figure does not flicker as one types.
  const [answer, setAnswer] = useState<number | null | undefined>(undefined);
  useEffect(() => {
    if (!askable || result.error) setAnswer(undefined);
    else if (!result.fetching && result.data) setAnswer(result.data.requestWorstCase);
  }, [askable, result]);
  return answer;
}
