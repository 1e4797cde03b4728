/**
 * Anthropic's Messages request (POST /v1/messages and /v1/messages/count_tokens). An Anthropic
 * model gets the body as the client sent it (only the gate's changes applied, see Forward);
 * for any other provider it is turned into the gateway's ChatRequest, leaving out (and naming)
 * what has no meaning there. What only Anthropic reads (cache marks, thinking, is_error) rides
 * along in the translation too; the other adapters drop it.
 */
import { boundedJsonObject, isJsonObject } from '@gatehouse/rules/jsonLimits';
import { z } from 'zod';
import { type ChatRequest, doorFields, dropName, knownFields, withForward } from '../../dataplane/request.ts';
import { parseWith } from '../../domain/errors.ts';
import {
  type CacheControl,
  type ChatMessage,
  type ContentPart,
  contentOf,
  type Sent,
  type TextPart,
  type ThinkingBlock,
  type ToolCall,
  type ToolChoice,
} from '../../providers/types.ts';

const text = z.string().max(5_000_000);
const cacheControl = z
  .object({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() })
  .nullish()
  .transform((c) => c ?? undefined);

const textBlock = z.object({ type: z.literal('text'), text, cache_control: cacheControl });
const imageBlock = z.object({
  type: z.literal('image'),
  source: z.discriminatedUnion('type', [
    z.object({
      type: z.literal('base64'),
      media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
      data: z.string().min(1),
    }),
    z.object({ type: z.literal('url'), url: z.url() }),
  ]),
  cache_control: cacheControl,
});
const toolUseBlock = z.object({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: boundedJsonObject,
  cache_control: cacheControl,
});
const toolResultBlock = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([text, z.array(z.discriminatedUnion('type', [textBlock, imageBlock]))]).optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});
const thinkingBlock = z.object({ type: z.literal('thinking'), thinking: text, signature: z.string() });
const redactedThinkingBlock = z.object({ type: z.literal('redacted_thinking'), data: z.string() });

/**
 * Content given as a string is one text block: read as blocks, a bad block is named by its own
 * path (messages.0.content.1.type) instead of the whole content's "invalid input". An empty
 * string is no block.
 */
const blocks = <T extends z.ZodType>(list: z.ZodArray<T>) =>
  z.preprocess((v) => (typeof v === 'string' ? (v ? [{ type: 'text', text: v }] : []) : v), list);

const userBlock = z.discriminatedUnion('type', [textBlock, imageBlock, toolResultBlock]);
const assistantBlock = z.discriminatedUnion('type', [
  textBlock,
  toolUseBlock,
  thinkingBlock,
  redactedThinkingBlock,
]);

const message = z.discriminatedUnion('role', [
  z.object({
    role: z.literal('user'),
    content: blocks(z.array(userBlock).min(1, 'must hold at least one block')),
  }),
  z.object({ role: z.literal('assistant'), content: blocks(z.array(assistantBlock)) }),
  // Instructions in the middle of the conversation, which Anthropic's current models take.
  z.object({ role: z.literal('system'), content: blocks(z.array(textBlock)) }),
]);

const tool = z.object({
  // Server tools (web search, code execution…) run at Anthropic; a gateway cannot route them.
  type: z.literal('custom', 'only client tools (type "custom" or none) are supported').optional(),
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -'),
  description: z.string().optional(),
  input_schema: boundedJsonObject,
  cache_control: cacheControl,
});

const toolChoice = z.discriminatedUnion('type', [
  z.object({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.object({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.object({
    type: z.literal('tool'),
    name: z.string().min(1),
    disable_parallel_tool_use: z.boolean().optional(),
  }),
  z.object({ type: z.literal('none') }),
]);

const thinking = z.discriminatedUnion('type', [
  z.object({ type: z.literal('enabled'), budget_tokens: z.number().int().min(1024) }),
  z.object({ type: z.literal('disabled') }),
  z.object({ type: z.literal('adaptive') }),
]);

const countTokensFields = {
  model: z.string().min(1).max(200),
  messages: z.array(message).min(1, 'must hold at least one message'),
  system: blocks(z.array(textBlock)).optional(),
  tools: z.array(tool).max(512).optional(),
  tool_choice: toolChoice.optional(),
  thinking: thinking.optional(),
};

export const messagesSchema = z.object({
  ...countTokensFields,
  max_tokens: z.number().int().min(1).max(2_000_000),
  stream: z.boolean().optional(),
  stop_sequences: z.array(z.string().min(1)).max(64).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  // Accepted for compatibility; the gateway has no equivalent to route it through.
  top_k: z.number().int().min(0).optional(),
  metadata: z.object({ user_id: z.string().max(256).nullish() }).optional(),
});

export const countTokensSchema = z.object(countTokensFields);

type MessagesBody = z.infer<typeof messagesSchema>;
type UserBlock = z.infer<typeof userBlock>;
type AssistantBlock = z.infer<typeof assistantBlock>;

const cached = (c: CacheControl | undefined) => (c ? { cache_control: c } : {});

function partOf(block: z.infer<typeof textBlock> | z.infer<typeof imageBlock>): ContentPart {
  if (block.type === 'text') return { type: 'text', text: block.text, ...cached(block.cache_control) };
  const { source } = block;
  const url = source.type === 'base64' ? `data:${source.media_type};base64,${source.data}` : source.url;
  return { type: 'image_url', image_url: { url }, ...cached(block.cache_control) };
}

/** Tool results first (OpenAI's shape wants them right after the calls), then what the user wrote. */
function userMessages(content: UserBlock[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const block of content) {
    if (block.type !== 'tool_result') continue;
    out.push({
      role: 'tool',
      tool_call_id: block.tool_use_id,
      // Blocks stay blocks, so Anthropic receives the result as it was written.
      content: Array.isArray(block.content) ? block.content.map(partOf) : (block.content ?? ''),
      ...(block.is_error !== undefined && { is_error: block.is_error }),
      ...cached(block.cache_control),
    });
  }
  const said = content.filter((b) => b.type !== 'tool_result').map(partOf);
  if (said.length > 0) out.push({ role: 'user', content: contentOf(said) });
  return out;
}

function assistantMessage(content: AssistantBlock[]): ChatMessage {
  const said: TextPart[] = [];
  const calls: ToolCall[] = [];
  const thought: ThinkingBlock[] = [];
  for (const block of content) {
    if (block.type === 'text') said.push(partOf(block) as TextPart);
    else if (block.type === 'tool_use') {
      calls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input) },
      });
    } else thought.push(block);
  }
  return {
    role: 'assistant',
    content: said.length > 0 ? contentOf(said) : null,
    ...(calls.length > 0 && { tool_calls: calls }),
    ...(thought.length > 0 && { thinking: thought }),
  };
}

function toolChoiceOf(choice: z.infer<typeof toolChoice> | undefined): ToolChoice | undefined {
  switch (choice?.type) {
    case undefined:
      return undefined;
    case 'auto':
    case 'none':
      return choice.type;
    case 'any':
      return 'required';
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
  }
}

/** The `anthropic-beta` header's values (comma-separated, possibly repeated). */
export function betasOf(header: string | undefined): string[] {
  return (header ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
}

type Counted = z.infer<typeof countTokensSchema> & Partial<MessagesBody>;

/** `modelIsGate`: `model` is the gate's UUID, not a model the client asks for. */
export function fromAnthropic(body: Counted, opts: { modelIsGate: boolean; betas: string[] }): ChatRequest {
  const system: ChatMessage[] = body.system?.length
    ? [{ role: 'system', content: contentOf(body.system.map(partOf)) as string | TextPart[] }]
    : [];
  const messages = body.messages.flatMap((m): ChatMessage[] => {
    if (m.role === 'user') return userMessages(m.content);
    if (m.role === 'system') {
      return [{ role: 'system', content: contentOf(m.content.map(partOf)) as string | TextPart[] }];
    }
    return [assistantMessage(m.content)];
  });
  const toolChoice = toolChoiceOf(body.tool_choice);
  const userId = body.metadata?.user_id;
  return {
    messages: [...system, ...messages],
    stream: body.stream ?? false,
    ...(!opts.modelIsGate && { model: body.model }),
    ...(body.max_tokens !== undefined && { maxTokens: body.max_tokens }),
    ...(body.temperature !== undefined && { temperature: body.temperature }),
    ...(body.top_p !== undefined && { topP: body.top_p }),
    ...(body.stop_sequences?.length && { stop: body.stop_sequences }),
    ...(body.tools?.length && {
      tools: body.tools.map((t) => ({
        type: 'function' as const,
        function: {
          name: t.name,
          ...(t.description !== undefined && { description: t.description }),
          parameters: t.input_schema,
        },
        ...cached(t.cache_control),
      })),
    }),
    ...(toolChoice && { toolChoice }),
    ...(body.thinking && { thinking: body.thinking }),
    ...(opts.betas.length > 0 && { betas: opts.betas }),
    ...(userId && { metadata: { user_id: userId } }),
  };
}

/** The fields a translation carries; the others have no meaning for another family's provider. */
const TRANSLATED_FIELDS = new Set([
  'model',
  'messages',
  'system',
  'max_tokens',
  'stream',
  'stop_sequences',
  'temperature',
  'top_p',
  'tools',
  'tool_choice',
  'thinking',
  'metadata',
]);
const TEXT_BLOCKS = new Set(['text']);
const BLOCKS_OF: Record<string, ReadonlySet<string>> = {
  user: new Set(['text', 'image', 'tool_result']),
  assistant: new Set(['text', 'tool_use', 'thinking', 'redacted_thinking']),
  system: TEXT_BLOCKS,
};
const RESULT_BLOCKS = new Set(['text', 'image']);

/**
 * The body without what a translation cannot carry (unknown fields, content block types and
 * server tools), and the names of what was left out: `context_management`, `content.document`,
 * `tools.web_search_20250305`. A turn left with no blocks is left out whole.
 */
export function translatable(body: unknown): { body: unknown; dropped: string[] } {
  if (!isJsonObject(body)) return { body, dropped: [] };
  const dropped: string[] = [];
  const kept = knownFields(body, TRANSLATED_FIELDS, dropped);
  const keepBlocks = (content: unknown, known: ReadonlySet<string> | undefined) => {
    if (!Array.isArray(content) || !known) return content;
    return content.filter((b) => {
      if (!isJsonObject(b) || typeof b.type !== 'string' || known.has(b.type)) return true;
      dropped.push(dropName(b.type, 'content'));
      return false;
    });
  };
  if (Array.isArray(kept.messages)) {
    kept.messages = kept.messages.flatMap((m) => {
      if (!isJsonObject(m) || !Array.isArray(m.content)) return [m];
      const content = (keepBlocks(m.content, BLOCKS_OF[String(m.role)]) as unknown[]).map((b) =>
        isJsonObject(b) && b.type === 'tool_result'
          ? { ...b, content: keepBlocks(b.content, RESULT_BLOCKS) }
          : b,
      );
      return content.length === 0 && m.content.length > 0 ? [] : [{ ...m, content }];
    });
  }
  kept.system = keepBlocks(kept.system, TEXT_BLOCKS);
  if (kept.system === undefined) delete kept.system;
  if (Array.isArray(kept.tools)) {
    // Server tools (web search, code execution…) run at Anthropic: another provider cannot run them.
    kept.tools = kept.tools.filter((t) => {
      if (!isJsonObject(t) || t.type === undefined || t.type === null || t.type === 'custom') return true;
      dropped.push(dropName(t.type, 'tools'));
      return false;
    });
  }
  return { body: kept, dropped: [...new Set(dropped)] };
}

/** What /v1/messages reads of a body itself, whichever provider answers. */
const messagesDoor = z.looseObject({
  ...doorFields,
  messages: z.array(z.unknown(), 'must be a list of messages').min(1, 'must hold at least one message'),
  max_tokens: z.number('must be a number').int().min(1),
});

/**
 * A /v1/messages body as the data plane takes it: checked only for what the gateway reads,
 * kept as sent for an Anthropic model, translated (where it can be) for the others.
 */
export function messagesRequest(
  body: unknown,
  opts: { modelIsGate: boolean; betas: string[]; sent: Sent },
): ChatRequest {
  const checked = parseWith(messagesDoor, body);
  const { body: cleaned, dropped } = translatable(body);
  const { gateId: _gateId, ...asSent } = checked;
  const fallback: ChatRequest = {
    messages: [],
    stream: checked.stream ?? false,
    maxTokens: checked.max_tokens,
    ...(!opts.modelIsGate && checked.model !== undefined && { model: checked.model }),
    ...(checked.temperature != null && { temperature: checked.temperature }),
    ...(checked.top_p != null && { topP: checked.top_p }),
  };
  return withForward(() => fromAnthropic(parseWith(messagesSchema, cleaned), opts), fallback, {
    api: 'anthropic-messages',
    body: asSent,
    ...opts.sent,
    dropped,
  });
}
