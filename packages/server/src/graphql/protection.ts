/**
 * What /graphql refuses before running anything: documents too large or too costly to answer,
 * variables of the wrong type, and, in production, the schema's own description (introspection,
 * field suggestions).
 */
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import { createGraphQLError, isAsyncIterable, type Plugin } from 'graphql-yoga';

/**
 * Per operation, well above what the dashboard sends (test/security-graphql.test.ts sends each of
 * its documents through them): its largest has ~1 KB, 140 tokens, depth 6, one alias, no
 * directive, and costs 2,339 (a page of 100 gates; armor multiplies by a literal `first`).
 */
export const DOCUMENT_LIMITS = {
  bytes: 32 * 1024,
  tokens: 1000,
  aliases: 15,
  depth: 10,
  directives: 10,
  cost: 20_000,
};

/** Refuses a query string over the byte limit before the parser sees it (413). */
const refuseLargeDocuments: Plugin = {
  onParams({ params }) {
    const bytes = typeof params.query === 'string' ? Buffer.byteLength(params.query) : 0;
    if (bytes > DOCUMENT_LIMITS.bytes) {
      throw createGraphQLError(`Document too large: ${bytes} bytes, the limit is ${DOCUMENT_LIMITS.bytes}`, {
        extensions: { code: 'PAYLOAD_TOO_LARGE', http: { status: 413 } },
      });
    }
  },
};

const SUGGESTION = /\s*Did you mean [^?]*\?/g;
const withoutSuggestions = (errors: readonly Error[]) => {
  for (const error of errors) error.message = error.message.replace(SUGGESTION, '');
};

/**
 * No "Did you mean …?" in any message: validation's name the fields of output types, variable
 * coercion's (at execution) those of input types, either of which would describe the schema.
 */
const hideSuggestions: Plugin = {
  onValidate:
    () =>
    ({ result }) =>
      withoutSuggestions(result),
  onExecute: () => ({
    onExecuteDone: ({ result }) => {
      if (!isAsyncIterable(result) && result.errors) withoutSuggestions(result.errors);
    },
  }),
};

const noIntrospection: Plugin = {
  onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule),
};

/**
 * A variable that cannot be coerced (a choice outside its enum, a DateTime that is not a string)
 * is the caller's mistake, as a bad argument is: BAD_USER_INPUT. Execution answers it with errors
 * and no data, before any resolver runs.
 */
const badVariables: Plugin = {
  onExecute: () => ({
    onExecuteDone: ({ result }) => {
      if (isAsyncIterable(result) || 'data' in result || !result.errors) return;
      for (const error of result.errors) error.extensions.code ??= 'BAD_USER_INPUT';
    },
  }),
};

export function protectionPlugins(opts: { introspection: boolean }): Plugin[] {
  const armor = EnvelopArmorPlugin({
    maxTokens: { n: DOCUMENT_LIMITS.tokens },
    maxAliases: { n: DOCUMENT_LIMITS.aliases },
    maxDepth: { n: DOCUMENT_LIMITS.depth },
    maxDirectives: { n: DOCUMENT_LIMITS.directives },
    costLimit: { maxCost: DOCUMENT_LIMITS.cost },
    blockFieldSuggestion: { enabled: false }, // hideSuggestions covers execution's messages too
  }) as Plugin;
  return [
    refuseLargeDocuments,
    armor,
    badVariables,
    ...(opts.introspection ? [] : [noIntrospection, hideSuggestions]),
  ];
}
