/**
 * Structured output: the provider's own JSON mode where it has one, the schema in the system
 * prompt where it has not, and in every case the gateway checks the answer itself.
 */

import { compileResponseSchema } from '../domain/responseSchema.ts';
import type { ChatParams, ResponseFormat } from '../providers/types.ts';

/** The params for a provider without native support: the contract moves into the prompt. */
export function withInjectedFormat(params: ChatParams, native: boolean): ChatParams {
  const format = params.responseFormat;
  if (!format || format.type === 'text' || native) return params;
  const instruction = formatInstruction(format);
  const { responseFormat: _dropped, ...rest } = params;
  // A forwarded body takes it as the gate's system prompt, the translation as a system message.
  const forward = rest.forward && { ...rest.forward, system: [instruction, ...(rest.forward.system ?? [])] };
  return {
    ...rest,
    messages: [{ role: 'system', content: instruction }, ...params.messages],
    ...(forward && { forward }),
  };
}

/** The contract in words, for a model asked in its prompt. */
function formatInstruction(format: Exclude<ResponseFormat, { type: 'text' }>): string {
  return format.type === 'json_object'
    ? 'Respond with a single valid JSON object and nothing else.'
    : `Respond with a single JSON value that validates against this JSON schema, and nothing else:\n${JSON.stringify(format.json_schema.schema)}`;
}

/** Why `content` breaks the contract, or null when it keeps it. */
export function formatViolation(format: ResponseFormat | undefined, content: string | null): string | null {
  if (!format || format.type === 'text') return null;
  if (content === null) return 'the model returned no content where JSON was required';
  let value: unknown;
  try {
    value = JSON.parse(stripFence(content));
  } catch {
    return 'the model returned text that is not valid JSON';
  }
  if (format.type === 'json_object') {
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? null
      : 'the model returned JSON that is not an object';
  }
  const validate = compileResponseSchema(format.json_schema.schema);
  if (typeof validate === 'string') return `the response schema ${validate}`;
  try {
    if (validate(value)) return null;
  } catch {
    // A recursive schema walks the answer recursively: JSON nested deep enough overflows it.
    return "the model's JSON is nested too deeply to be checked against the schema";
  }
  const first = validate.errors?.[0];
  return `the model's JSON does not match the schema: ${first?.instancePath || '/'} ${first?.message ?? ''}`.trim();
}

/** Models asked in the prompt sometimes wrap JSON in a Markdown fence. */
export function stripFence(content: string): string {
  const m = /^\s*```(?:json)?\s*\n([\s\S]*?)\n```\s*$/.exec(content);
  return m ? (m[1] as string) : content;
}

/** Why a response schema cannot be used, or null: checked before any provider is called. */
export function schemaProblem(format: ResponseFormat | undefined): string | null {
  if (format?.type !== 'json_schema') return null;
  const validate = compileResponseSchema(format.json_schema.schema);
  return typeof validate === 'string' ? `json_schema.schema ${validate}` : null;
}
