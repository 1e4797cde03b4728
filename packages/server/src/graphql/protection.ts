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
  /** Rows over all the lists of an operation, `first: $n` included (context.ts countRows). */
  listedRows: 500,
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

/** How much of a quoted value (a variable's, say) and of a whole message an error may repeat. */
const MESSAGE_LIMITS = { quoted: 200, message: 2000 };

/**
 * Each quoted string of a message cut to MESSAGE_LIMITS.quoted characters, in one pass: graphql-js
 * quotes a bad variable's whole value in its message, twice, and an answer should not echo a
 * megabyte back.
 */
function shortenQuoted(message: string): string {
  let shortened = '';
  let from = 0;
  for (let open = message.indexOf('"'); open !== -1; open = message.indexOf('"', from)) {
    let close = open + 1;
    while (close < message.length && message[close] !== '"') close += message[close] === '\\' ? 2 : 1;
    const long = close - open - 1 > MESSAGE_LIMITS.quoted;
    shortened += long
      ? `${message.slice(from, open + 1 + MESSAGE_LIMITS.quoted)}…"`
      : message.slice(from, close + 1);
    from = close + 1;
  }
  shortened += message.slice(from);
  return shortened.length > MESSAGE_LIMITS.message
    ? `${shortened.slice(0, MESSAGE_LIMITS.message)}…`
    : shortened;
}

/**
 * The message without its "Did you mean …?", which graphql-js always puts last. Found with
 * lastIndexOf, not a regular expression: a message holds the caller's text, and `\s*Did you mean`
 * over 80,000 spaces took 9 seconds.
 */
function withoutSuggestion(message: string): string {
  const at = message.lastIndexOf(' Did you mean ');
  return at === -1 ? message : message.slice(0, at);
}

const tidy = (errors: readonly Error[], suggestions: boolean) => {
  for (const error of errors) {
    const short = shortenQuoted(error.message);
    error.message = suggestions ? short : withoutSuggestion(short);
  }
};

/**
 * Error messages bounded, and in production without "Did you mean …?": validation's name the
 * fields of output types, variable coercion's (at execution) those of input types, either of
 * which would describe the schema.
 */
const tidyMessages = (suggestions: boolean): Plugin => ({
  onValidate:
    () =>
    ({ result }) =>
      tidy(result, suggestions),
  onExecute: () => ({
    onExecuteDone: ({ result }) => {
      if (!isAsyncIterable(result) && result.errors) tidy(result.errors, suggestions);
    },
  }),
});

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
    blockFieldSuggestion: { enabled: false }, // tidyMessages covers execution's messages too
  }) as Plugin;
  return [
    refuseLargeDocuments,
    armor,
    badVariables,
    tidyMessages(opts.introspection),
    ...(opts.introspection ? [] : [noIntrospection]),
  ];
}
