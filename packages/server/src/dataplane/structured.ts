/**
 * Structured output: the provider's own JSON mode where it has one, the schema in the system
 * prompt where it has not, and in every case the gateway checks the answer itself.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import type { ChatParams, ResponseFormat } from '../providers/types.ts';

// addUsedSchema: false, so a client schema's $id is never registered on the shared instance.
const ajv = new Ajv({ allErrors: false, strict: false, addUsedSchema: false });
const validators = new Map<string, ValidateFunction | Error>();

function validatorFor(schema: Record<string, unknown>): ValidateFunction | Error {
  const key = JSON.stringify(schema);
  let v = validators.get(key);
  if (!v) {
    try {
      v = ajv.compile(schema);
    } catch (error) {
      v = new Error(`the response schema is not a valid JSON schema: ${(error as Error).message}`);
    }
    if (validators.size > 1000) {
      validators.clear();
      ajv.removeSchema();
    }
    validators.set(key, v);
  }
  return v;
}

/** The params for a provider without native support: the contract moves into the prompt. */
export function withInjectedFormat(params: ChatParams, native: boolean): ChatParams {
  const format = params.responseFormat;
  if (!format || format.type === 'text' || native) return params;
  const instruction =
    format.type === 'json_object'
      ? 'Respond with a single valid JSON object and nothing else.'
      : `Respond with a single JSON value that validates against this JSON schema, and nothing else:\n${JSON.stringify(format.json_schema.schema)}`;
  const { responseFormat: _dropped, ...rest } = params;
  return { ...rest, messages: [{ role: 'system', content: instruction }, ...params.messages] };
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
  const validate = validatorFor(format.json_schema.schema);
  if (validate instanceof Error) return validate.message;
  if (validate(value)) return null;
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
  const validate = validatorFor(format.json_schema.schema);
  return validate instanceof Error ? validate.message : null;
}
