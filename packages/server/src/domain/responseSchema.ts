/**
 * The JSON schemas of structured output, a gate's and a request's alike, compiled into the check
 * the gateway runs on a model's answer. Both go through here: a gate's when it is saved (so one
 * that can never compile is refused then, not on every request) and a request's before any
 * provider is called.
 *
 * Patterns (`pattern`, `patternProperties`) run on RE2 (re2js), whose matching takes time linear
 * in the input. JavaScript's own engine backtracks: `^(a+)+$` against 30 characters holds the
 * whole process for seconds, doubling with each one more. The price is RE2's syntax: a pattern
 * with lookaround or a backreference is refused where the schema is given. RE2 compiles a counted
 * repetition by writing it out, so the number, length and counts of patterns are bounded
 * (RESPONSE_SCHEMA_LIMITS) before anything is compiled.
 *
 * Not imported by the dashboard (through rules/gate.ts): Ajv and RE2 stay on the server.
 */

import { responseSchemaSizeProblem } from '@gatehouse/rules/jsonLimits';
import { Ajv, type ValidateFunction } from 'ajv';
import { RE2JS } from 're2js';

/** `\k<name>`, which RE2JS's translation would otherwise turn into the literal text "k<name>". */
function hasNamedBackreference(pattern: string): boolean {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] !== '\\') continue;
    if (pattern[i + 1] === 'k' && pattern[i + 2] === '<') return true;
    i++; // an escaped character, whatever it is, is not the start of another escape
  }
  return false;
}

/** Ajv's regular-expression engine: JavaScript pattern syntax, RE2's matching. */
function re2(pattern: string): { test(text: string): boolean } {
  const refuse = (why: string) =>
    new Error(
      `pattern ${JSON.stringify(pattern)} cannot run on RE2, the linear-time regular expression engine used here (no lookaround, no backreferences): ${why}`,
    );
  if (hasNamedBackreference(pattern)) throw refuse('it uses a backreference');
  try {
    return RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (error) {
    throw refuse((error as Error).message);
  }
}
// Ajv reads `code` only to print standalone validation code, which is never generated here.
re2.code = 'RE2JS.compile';

// A validator within RESPONSE_SCHEMA_LIMITS keeps up to about 1 MB (a 64 KB schema with its
// patterns at the limits), so a full cache holds about 100 MB at worst.
const CACHE_SIZE = 100;

function newAjv() {
  // addUsedSchema: false, so a schema's $id is never registered for the next one to $ref; no
  // logger, so a client's unknown format or keyword cannot fill the server's log. Compile time is
  // the main thread's (RESPONSE_SCHEMA_LIMITS.maxMembers bounds it): Ajv's optimising pass over
  // the generated code took about two thirds of it, for validators no faster in use; and a
  // referenced schema is compiled once rather than written out at each $ref to it, so a 64 KB
  // schema cannot refer to one large definition hundreds of times.
  return new Ajv({
    allErrors: false,
    strict: false,
    addUsedSchema: false,
    logger: false,
    inlineRefs: false,
    code: { regExp: re2, optimize: false },
  });
}

let ajv = newAjv();
let compiled = new Map<string, ValidateFunction | string>();

/**
 * The validator for `schema`, or why it cannot have one (a message that follows the field's
 * name: "must not nest…", "is not a usable JSON schema: …"). Compiled once per distinct schema.
 */
export function compileResponseSchema(schema: unknown): ValidateFunction | string {
  const tooBig = responseSchemaSizeProblem(schema);
  if (tooBig) return tooBig;
  const key = JSON.stringify(schema);
  let found = compiled.get(key);
  if (found !== undefined) return found;
  if (compiled.size >= CACHE_SIZE) {
    // A fresh instance rather than ajv.removeSchema(): Ajv keeps every compiled pattern and
    // function in its scope for the instance's life, so only a new one lets them go.
    ajv = newAjv();
    compiled = new Map();
  }
  try {
    found = ajv.compile(schema as Record<string, unknown>);
  } catch (error) {
    found = `is not a usable JSON schema: ${(error as Error).message}`;
  }
  compiled.set(key, found);
  return found;
}

/** Why `schema` cannot be a response schema, or null when it compiles. */
export function responseSchemaProblem(schema: unknown): string | null {
  const result = compileResponseSchema(schema);
  return typeof result === 'string' ? result : null;
}
