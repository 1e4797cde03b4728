/** Tokens and dollars: from the provider's usage where it reports one, counted here where not. */
import { findModel } from '../domain/catalog.ts';
import { type ChatCompletion, type ChatParams, textOf, type Usage } from '../providers/types.ts';
import { gateResponseFormat } from './merge.ts';
import { dropName } from './request.ts';

/** Output tokens assumed for the worst case when neither the gate nor the client caps them. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;
/** Per-message framing tokens in chat formats (role markers and separators). */
const MESSAGE_OVERHEAD_TOKENS = 4;
/**
 * Prompt a provider adds when tools are offered, beyond the tools' own text (Anthropic documents
 * 313–530 tokens of tool-use system prompt): part of the worst case, or small tools would let a
 * bill pass its reservation.
 */
const TOOL_USE_OVERHEAD_TOKENS = 1000;

/**
 * The tokenizer, loaded when first needed: its tables take ~35 MB of memory, and the major
 * providers report usage themselves, so many processes never need it.
 */
let tokenizer: Promise<typeof import('gpt-tokenizer')> | undefined;

export function costOf(modelId: string, usage: Usage): number {
  const model = findModel(modelId);
  if (!model) return 0;
  const input = model.inputPricePerMTok ?? 0;
  const cached = Math.min(usage.cachedTokens ?? 0, usage.promptTokens);
  const written = Math.min(usage.cacheWriteTokens ?? 0, usage.promptTokens - cached);
  const dollars =
    (usage.promptTokens - cached - written) * input +
    cached * (model.cachedInputPricePerMTok ?? input) +
    written * (model.cacheWriteInputPricePerMTok ?? input) +
    usage.completionTokens * (model.outputPricePerMTok ?? 0);
  return dollars / 1_000_000;
}

/**
 * How much text one count reads exactly (TOKEN_COUNT_LIMITS): BPE's time grows with the square
 * of a word's length (100,000 letters "a" took 6.7 s of the only thread that answers requests;
 * 3.6 MB of prose 2 s), so text is read in windows cut at whitespace where it can be, and past
 * `exactChars` the rest is estimated at the rate of what was counted.
 */
export const TOKEN_COUNT_LIMITS = {
  /** Characters counted exactly per count (a request's prompt, an answer); the rest estimated. */
  exactChars: 16_384,
  /** Longest piece the tokenizer is given at once; a longer word is cut (a token or two off). */
  windowChars: 512,
} as const;

/** `text` in pieces of at most `size` characters, each ending before whitespace where one lies near its end. */
function* windows(text: string, size: number): Generator<string> {
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + size, text.length);
    if (end < text.length) {
      // The tokenizer's words begin at a space: cut before the last one, keeping that word whole.
      const space = text.lastIndexOf(' ', end);
      if (space > start + size / 2) end = space;
    }
    yield text.slice(start, end);
    start = end;
  }
}

/**
 * gpt-tokenizer's (o200k) count of texts, loaded on first use; each counter reads at most
 * TOKEN_COUNT_LIMITS.exactChars exactly and estimates the rest, so one call's time is bounded.
 */
async function tokenCounter(): Promise<(text: string) => number> {
  tokenizer ??= import('gpt-tokenizer');
  // The answer is paid for whatever happens here: without the tokenizer, a byte count stands in.
  const countTokens = await tokenizer.then(
    (t) => (text: string) => t.countTokens(text, { disallowedSpecial: new Set() }),
    (error) => {
      console.error('cost: gpt-tokenizer could not be loaded; estimating tokens as bytes / 4', error);
      return (text: string) => Math.ceil(Buffer.byteLength(text) / 4);
    },
  );
  const { exactChars, windowChars } = TOKEN_COUNT_LIMITS;
  let countedChars = 0;
  let countedTokens = 0;
  return (text: string) => {
    let tokens = 0;
    let read = 0;
    for (const piece of windows(text, windowChars)) {
      if (countedChars >= exactChars) break;
      const n = countTokens(piece);
      tokens += n;
      read += piece.length;
      countedChars += piece.length;
      countedTokens += n;
    }
    const rest = text.length - read;
    // What was not counted, at the rate of what was (a quarter of a token a character before any).
    return rest > 0
      ? tokens + Math.ceil(rest * (countedChars > 0 ? countedTokens / countedChars : 0.25))
      : tokens;
  };
}

/** Each list of texts' count, kept while the list lives (a rate limit and the price read it). */
const textCounts = new WeakMap<string[], Promise<number>>();

/** The tokens of `texts` as gpt-tokenizer (o200k) counts them: where a provider reports none. */
export function countTextTokens(texts: string[]): Promise<number> {
  let counted = textCounts.get(texts);
  if (!counted) {
    counted = tokenCounter().then((count) => texts.reduce((n, text) => n + count(text), 0));
    textCounts.set(texts, counted);
  }
  return counted;
}

/**
 * The most tokens `texts` can be in any tokenizer: one per UTF-8 byte (byte-level BPE never
 * makes more). What a block gate reserves for input it has not sent yet.
 */
export function tokensBound(texts: string[]): number {
  return texts.reduce((n, text) => n + Buffer.byteLength(text), 0);
}

/** Each request's prompt count, kept while its params live: a rate limit and the price read it. */
const promptCounts = new WeakMap<ChatParams, Promise<number>>();

/**
 * The prompt tokens of a request, counted with gpt-tokenizer (o200k): exact only for OpenAI's
 * o200k models, an estimate for every other tokenizer. Images are not counted. Counted once per
 * params: a tokens-per-minute limit counts it at admission, and a price without usage reads it.
 */
export function estimatePromptTokens(params: ChatParams): Promise<number> {
  let counted = promptCounts.get(params);
  if (!counted) {
    counted = countPromptTokens(params);
    promptCounts.set(params, counted);
  }
  return counted;
}

async function countPromptTokens(params: ChatParams): Promise<number> {
  const count = await tokenCounter();
  let prompt = 0;
  for (const m of params.messages) {
    prompt += count(textOf(m.content as string)) + MESSAGE_OVERHEAD_TOKENS;
    if (m.role === 'assistant' && m.tool_calls) {
      prompt += count(m.tool_calls.map((c) => c.function.name + c.function.arguments).join(''));
    }
  }
  if (params.tools) prompt += count(JSON.stringify(params.tools));
  return prompt;
}

/** Usage counted with gpt-tokenizer (o200k), for providers that report none: an estimate. */
export async function estimateUsage(params: ChatParams, completion: ChatCompletion): Promise<Usage> {
  const count = await tokenCounter();
  const output =
    count(completion.content ?? '') + count(completion.toolCalls.map((c) => c.function.arguments).join(''));
  return { promptTokens: await estimatePromptTokens(params), completionTokens: output };
}

/**
 * `params` with an explicit output cap: a provider told no cap writes (and bills) as long as it
 * likes, so a request whose worst case is reserved is sent the cap that worst case assumed.
 */
export function withOutputCap(params: ChatParams): ChatParams {
  return params.maxTokens === undefined ? { ...params, maxTokens: DEFAULT_MAX_OUTPUT_TOKENS } : params;
}

/** Fields of a body as sent that change its price beyond its tokens. */
const PRICED_FIELDS = ['service_tier', 'web_search_options'];
/** Tools a provider runs itself and bills per call, beyond the tokens (by type, in either family). */
const FEE_TOOLS = /^(web_search|web_fetch|file_search|code_interpreter|code_execution|image_generation|mcp)/;

/**
 * What is sent on a block limit, held to what the reservation bounds: the output cap, and a body
 * forwarded as sent only where its cost is its tokens. A body with no translation carries what
 * the bound cannot see (several choices, a stored conversation or prompt, a background run): it
 * is refused with the reason. Hosted tools that bill per call and a dearer service tier are left
 * out, and named (`withheld`).
 */
export function boundedForReservation(params: ChatParams): ChatParams {
  const capped = withOutputCap(params);
  const forward = capped.forward;
  if (!forward) return capped;
  if (forward.untranslatable) throw forward.untranslatable;
  const withheld: string[] = [];
  const body = { ...forward.body };
  for (const field of PRICED_FIELDS) {
    if (field in body) {
      delete body[field];
      withheld.push(field);
    }
  }
  if (Array.isArray(body.tools)) {
    body.tools = body.tools.filter((t) => {
      const type = (t as { type?: unknown } | null)?.type;
      if (typeof type !== 'string' || !FEE_TOOLS.test(type)) return true;
      withheld.push(dropName(type, 'tools'));
      return false;
    });
  }
  return withheld.length === 0 ? capped : { ...capped, forward: { ...forward, body, withheld } };
}

/**
 * Prompt tokens an image may cost at most. Providers charge by size: up to ~1,600 (Anthropic),
 * ~1,450 (gpt-4o), ~3,800 (gpt-4.1-nano's patches) and a few hundred per tile (Gemini); gpt-4o-mini
 * counts each image ~33 times over (2,833 + 5,667 per tile, up to 8 tiles in high detail).
 */
function imageTokensBound(modelId: string): number {
  return /gpt-4o-mini/.test(modelId) ? 2_833 + 8 * 5_667 : 6_000;
}

/**
 * The most a request can cost on any of `models`: an upper bound on its prompt tokens (every
 * token covers at least one byte of text, images at their largest size) plus its output cap.
 * Reserved against a block limit before the call, so concurrent calls cannot overspend.
 */
export function worstCaseCost(models: string[], params: ChatParams): number {
  let promptBound = 0;
  let images = 0;
  for (const m of params.messages) {
    const content = m.content;
    if (typeof content === 'string') promptBound += Buffer.byteLength(content);
    else if (content) {
      for (const part of content) {
        if (part.type === 'text') promptBound += Buffer.byteLength(part.text);
        else images += 1;
      }
    }
    if (m.role === 'assistant') {
      if (m.tool_calls) promptBound += Buffer.byteLength(JSON.stringify(m.tool_calls));
      // Thinking blocks sent back to the model are read as prompt.
      for (const block of m.thinking ?? []) promptBound += Buffer.byteLength(JSON.stringify(block));
    }
    promptBound += MESSAGE_OVERHEAD_TOKENS;
  }
  if (params.tools) promptBound += Buffer.byteLength(JSON.stringify(params.tools)) + TOOL_USE_OVERHEAD_TOKENS;
  // A response format's schema (the gate's or the client's) is read as prompt too; an adapter
  // adds it to a forwarded body as well.
  const format = params.responseFormat ? Buffer.byteLength(JSON.stringify(params.responseFormat)) : 0;
  promptBound += format;
  // A forwarded body may hold what the translation left out: its bytes bound its prompt too,
  // measured on the client's text where it was read (a coding agent's body: no second writing).
  const forward = params.forward;
  if (forward) {
    const added = (forward.system ?? []).reduce((n, text) => n + Buffer.byteLength(text), 0);
    const tools = forward.body.tools;
    const overhead = Array.isArray(tools) && tools.length > 0 ? TOOL_USE_OVERHEAD_TOKENS : 0;
    const body = forward.bodyBytes ?? Buffer.byteLength(JSON.stringify(forward.body));
    const sent = body + added + overhead + format;
    promptBound = Math.max(promptBound, sent);
  }
  const output = params.maxTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  return Math.max(
    0,
    ...models.map((id) =>
      costOf(id, { promptTokens: promptBound + images * imageTokensBound(id), completionTokens: output }),
    ),
  );
}

/**
 * The least any one request on a chat gate can have as its worst case: worstCaseCost with the
 * gate's own part of every request (its system prompt, its response format's schema) and its
 * output cap (DEFAULT_MAX_OUTPUT_TOKENS when unset), on its dearest model. A block limit below it
 * refuses every request that keeps the gate's cap. Null for other task types, whose worst case is
 * all input (images, seconds, pages).
 */
export function gateRequestWorstCase(
  gate: {
    taskType: string;
    model: string;
    fallbackModels: string[];
    systemPrompt: string | null;
    maxTokens: number | null;
  } & Parameters<typeof gateResponseFormat>[0],
): number | null {
  if (gate.taskType !== 'chat') return null;
  const responseFormat = gateResponseFormat(gate);
  return worstCaseCost([gate.model, ...gate.fallbackModels], {
    messages: gate.systemPrompt ? [{ role: 'system', content: gate.systemPrompt }] : [],
    ...(gate.maxTokens !== null && { maxTokens: gate.maxTokens }),
    ...(responseFormat && { responseFormat }),
  });
}
