/**
 * The client's chat request, as both endpoints accept it: /v3/chat (native, camelCase) and
 * /v1/chat/completions (OpenAI's wire format). Both parse into one ChatRequest.
 */

import { boundedJsonObject, boundedMetadata, isJsonObject } from '@gatehouse/rules/jsonLimits';
import { z } from 'zod';
import { parseWith, ValidationError } from '../domain/errors.ts';
import {
  type ChatMessage,
  type Forward,
  REASONING_EFFORTS,
  type ReasoningEffort,
  type ResponseFormat,
  type Sent,
  type ThinkingConfig,
  type ToolChoice,
  type ToolDefinition,
} from '../providers/types.ts';
import { customArguments, customToolFunction } from './customTools.ts';

const text = z.string().max(5_000_000);
const textPart = z.object({ type: z.literal('text'), text });
/**
 * An image by URL, or inline as a base64 data URL of an image type: providers such as Gemini take
 * any inline media (a PDF, an hour of audio), priced far beyond what an image's worst case allows.
 */
export const imageUrl = z
  .string()
  .min(1)
  .refine(
    (url) =>
      url.startsWith('data:')
        ? /^data:image\/(png|jpeg|gif|webp|heic|heif);base64,/.test(url)
        : /^https?:\/\//.test(url),
    'must be an http(s) URL, or a base64 data URL of a PNG, JPEG, GIF, WebP or HEIC image',
  );
const imagePart = z.object({
  type: z.literal('image_url'),
  image_url: z.object({ url: imageUrl, detail: z.string().optional() }),
});
const toolCall = z.object({
  id: z.string().min(1),
  type: z.literal('function').default('function'),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
});

export const messageSchema = z.discriminatedUnion('role', [
  z.object({
    role: z.enum(['system', 'developer']),
    content: z.union([text, z.array(textPart)]),
    name: z.string().optional(),
  }),
  z.object({
    role: z.literal('user'),
    content: z.union([text, z.array(z.union([textPart, imagePart])).min(1)]),
    name: z.string().optional(),
  }),
  z
    .object({
      role: z.literal('assistant'),
      content: z
        .union([text, z.array(textPart)])
        .nullable()
        .optional(),
      name: z.string().optional(),
      tool_calls: z.array(toolCall).optional(),
    })
    .refine(
      (m) => m.content != null || (m.tool_calls?.length ?? 0) > 0,
      'an assistant message needs content or tool_calls',
    ),
  z.object({
    role: z.literal('tool'),
    content: z.union([text, z.array(textPart)]),
    tool_call_id: z.string().min(1),
  }),
]);

/** A function the model may call (OpenAI's shape; the Responses API has it unwrapped). */
export const toolFunction = z.object({
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -'),
  description: z.string().optional(),
  parameters: boundedJsonObject.optional(),
  strict: z.boolean().nullable().optional(),
});

const toolDefinition = z.object({ type: z.literal('function'), function: toolFunction });

const toolChoice = z.union([
  z.enum(['auto', 'none', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1) }) }),
]);

/** A JSON schema the answer must follow (the Responses API has it unwrapped in `text.format`). */
export const jsonSchemaFormat = z.object({
  name: z.string().min(1).max(64),
  description: z.string().optional(),
  // An object, taken as it is: its size, depth and members are bounded where it is compiled
  // (responseSchema.ts), before anything walks it; a record's parse here would visit every key.
  schema: z.custom<Record<string, unknown>>(
    (value) => value !== null && typeof value === 'object' && !Array.isArray(value),
    'must be a JSON schema object',
  ),
  strict: z.boolean().nullable().optional(),
});

const responseFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({ type: z.literal('json_schema'), json_schema: jsonSchemaFormat }),
]);

const stop = z
  .union([z.string(), z.array(z.string()).max(4)])
  .transform((s) => (typeof s === 'string' ? [s] : s));

/** Ranges a client's parameters must respect, override permission or not. */
export const params = {
  temperature: z.number().min(0).max(2),
  maxTokens: z.number().int().min(1).max(2_000_000),
  topP: z.number().min(0).max(1),
  model: z.string().min(1).max(200),
  seed: z.number().int(),
};

export const metadata = boundedMetadata;

export const nativeChatSchema = z.object({
  gateId: z.uuid('must be a gate UUID'),
  data: z.object({
    messages: z.array(messageSchema).min(1, 'must hold at least one message'),
    temperature: params.temperature.optional(),
    maxTokens: params.maxTokens.optional(),
    topP: params.topP.optional(),
    model: params.model.optional(),
    stream: z.boolean().optional(),
    tools: z.array(toolDefinition).max(128).optional(),
    toolChoice: toolChoice.optional(),
    responseFormat: responseFormat.optional(),
    stop: stop.optional(),
    seed: params.seed.optional(),
  }),
  sessionId: z.string().min(1).max(200).optional(),
  /** The step an orchestrated agent gate is asked for (the x-gatehouse-action header's twin). */
  action: z.string().min(1).max(64).optional(),
  metadata: metadata.optional(),
});

export const openAIChatSchema = z.object({
  model: params.model,
  messages: z.array(messageSchema).min(1, 'must hold at least one message'),
  temperature: params.temperature.nullable().optional(),
  max_tokens: params.maxTokens.nullable().optional(),
  max_completion_tokens: params.maxTokens.nullable().optional(),
  top_p: params.topP.nullable().optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
  tools: z.array(toolDefinition).max(128).optional(),
  tool_choice: toolChoice.optional(),
  response_format: responseFormat.optional(),
  stop: stop.nullable().optional(),
  seed: params.seed.nullable().optional(),
  n: z.literal(1, 'only n=1 is supported').nullable().optional(),
  reasoning_effort: z.enum(REASONING_EFFORTS).nullish(),
  user: z.string().optional(),
  gateId: z.uuid().optional(),
  metadata: metadata.optional(),
});

export type ChatRequest = {
  messages: ChatMessage[];
  temperature?: number;
  maxTokens?: number;
  topP?: number;
  model?: string;
  stream: boolean;
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  responseFormat?: ResponseFormat;
  stop?: string[];
  seed?: number;
  /** Anthropic's extended thinking and beta headers (/v1/messages); the other adapters drop them. */
  thinking?: ThinkingConfig;
  /** OpenAI's reasoning effort (/v1/responses, /v1/chat/completions), mapped per model (reasoning.ts). */
  reasoningEffort?: ReasoningEffort;
  betas?: string[];
  /** A drop-in route's request as sent, for a provider of its own family. */
  forward?: Forward;
  sessionId?: string;
  action?: string;
  metadata?: Record<string, unknown>;
};

/**
 * A name for what a translation left out, as a response header and a log entry can carry it: a
 * client's key or type as printable ASCII without commas, at most 64 characters, or the kind of
 * value where it is no string (a type may be anything a client sends, an array nested 2,000 deep).
 */
export function dropName(value: unknown, within?: string): string {
  const name =
    typeof value === 'string' ? value.replace(/[^\x21-\x2b\x2d-\x7e]/g, '?').slice(0, 64) : typeof value;
  return within === undefined ? name : `${within}.${name}`;
}

/** How many of the names a translation left out are told (a response header, a log entry). */
export const MAX_DROPPED_NAMES = 20;

/**
 * What a translation left out, as it is told: the first MAX_DROPPED_NAMES names, then how many
 * more (`+49980-more`, a header value without spaces or commas). A body of 50,000 unknown keys
 * named them all in a 3 MB header clients refused.
 */
export function droppedTold(dropped: string[]): string[] {
  if (dropped.length <= MAX_DROPPED_NAMES) return dropped;
  return [...dropped.slice(0, MAX_DROPPED_NAMES), `+${dropped.length - MAX_DROPPED_NAMES}-more`];
}

/**
 * `body` with only the `known` fields; the others are named in `dropped` (a translation to
 * another family leaves them out, and says so).
 */
export function knownFields(body: Record<string, unknown>, known: ReadonlySet<string>, dropped: string[]) {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (known.has(key)) kept[key] = value;
    else dropped.push(dropName(key));
  }
  return kept;
}

/** What a drop-in route checks of a body itself, whatever the gate's family: only what it reads. */
export const doorFields = {
  model: z.string('must be a string').min(1).max(200).optional(),
  stream: z.boolean('must be a boolean').nullish(),
  temperature: z.number('must be a number').nullish(),
  top_p: z.number('must be a number').nullish(),
};

/**
 * A drop-in request: its translation for providers of another family, and the body as sent for
 * its own (`forward`). Where the body has no translation (a shape only its own family reads),
 * `fallback` (what the door checked) stands in and the reason is kept: a provider of its own
 * family still takes it, another one is refused with it.
 */
export function withForward(
  translate: () => ChatRequest,
  fallback: ChatRequest,
  forward: Forward,
): ChatRequest {
  try {
    return { ...translate(), forward };
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { ...fallback, forward: { ...forward, untranslatable: error } };
  }
}

/** `o` (a literal of its own) without its undefined and null members; a loop: entries, filter and fromEntries made an array a member. */
function defined<T extends object>(o: T): T {
  const kept: Partial<T> = {};
  for (const key in o) {
    const value = o[key];
    if (value !== undefined && value !== null) kept[key] = value;
  }
  return kept as T;
}

export function fromNative(body: z.infer<typeof nativeChatSchema>): ChatRequest {
  const { data } = body;
  return defined({
    ...data,
    messages: data.messages as ChatMessage[],
    tools: data.tools as ToolDefinition[] | undefined,
    stream: data.stream ?? false,
    sessionId: body.sessionId,
    action: body.action,
    metadata: body.metadata,
  });
}

/** `model` carries the gate's UUID, or a model the client asks for (an override). */
export function fromOpenAI(body: z.infer<typeof openAIChatSchema>, modelIsGate: boolean): ChatRequest {
  return defined({
    messages: body.messages as ChatMessage[],
    temperature: body.temperature ?? undefined,
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    topP: body.top_p ?? undefined,
    model: modelIsGate ? undefined : body.model,
    stream: body.stream ?? false,
    tools: body.tools as ToolDefinition[] | undefined,
    toolChoice: body.tool_choice,
    responseFormat: body.response_format,
    stop: body.stop ?? undefined,
    seed: body.seed ?? undefined,
    reasoningEffort: body.reasoning_effort ?? undefined,
    metadata: body.metadata,
  });
}

const CHAT_FIELDS = new Set(Object.keys(openAIChatSchema.shape));

/**
 * A chat-completions body without what a translation cannot carry, and the names of what was
 * left out (fields, `tools.<type>`): custom tools become function tools of one string argument,
 * and their calls in the conversation calls of those functions.
 */
export function chatTranslatable(body: unknown): { body: unknown; dropped: string[] } {
  if (!isJsonObject(body)) return { body, dropped: [] };
  const dropped: string[] = [];
  const kept = knownFields(body, CHAT_FIELDS, dropped);
  if (Array.isArray(kept.messages)) {
    // A custom tool's earlier calls become calls of its function, the text its `input`.
    kept.messages = kept.messages.map((m) => {
      if (!isJsonObject(m) || !Array.isArray(m.tool_calls)) return m;
      const calls = m.tool_calls.map((c) =>
        isJsonObject(c) && c.type === 'custom' && isJsonObject(c.custom)
          ? {
              id: c.id,
              type: 'function',
              function: { name: c.custom.name, arguments: customArguments(c.custom.input) },
            }
          : c,
      );
      return { ...m, tool_calls: calls };
    });
  }
  const choice = kept.tool_choice;
  if (isJsonObject(choice) && choice.type === 'custom' && isJsonObject(choice.custom)) {
    kept.tool_choice = { type: 'function', function: { name: choice.custom.name } };
  }
  if (Array.isArray(kept.tools)) {
    kept.tools = kept.tools.flatMap((t) => {
      if (!isJsonObject(t) || t.type === 'function') return [t];
      const custom = t.custom as { name?: unknown; description?: unknown } | undefined;
      if (t.type === 'custom' && typeof custom?.name === 'string') {
        return [
          {
            type: 'function',
            function: customToolFunction(custom.name, custom.description as string | undefined),
          },
        ];
      }
      dropped.push(dropName(t.type, 'tools'));
      return [];
    });
  }
  return { body: kept, dropped: [...new Set(dropped)] };
}

const chatDoor = z.looseObject({
  ...doorFields,
  messages: z.array(z.unknown(), 'must be a list of messages').min(1, 'must hold at least one message'),
  max_tokens: z.number('must be a number').int().min(1).nullish(),
  max_completion_tokens: z.number('must be a number').int().min(1).nullish(),
});

/**
 * A /v1/chat/completions body as the data plane takes it: checked only for what the gateway
 * reads, kept as sent for OpenAI, translated (where it can be) for the other providers.
 */
export function chatRequest(body: unknown, opts: { modelIsGate: boolean; sent: Sent }): ChatRequest {
  const checked = parseWith(chatDoor, body);
  const { body: cleaned, dropped } = chatTranslatable(body);
  const { gateId: _gateId, ...asSent } = checked;
  const maxTokens = checked.max_completion_tokens ?? checked.max_tokens;
  const fallback: ChatRequest = {
    messages: [],
    stream: checked.stream ?? false,
    ...(!opts.modelIsGate && checked.model !== undefined && { model: checked.model }),
    ...(maxTokens != null && { maxTokens }),
    ...(checked.temperature != null && { temperature: checked.temperature }),
    ...(checked.top_p != null && { topP: checked.top_p }),
  };
  return withForward(() => fromOpenAI(parseWith(openAIChatSchema, cleaned), opts.modelIsGate), fallback, {
    api: 'openai-chat',
    body: asSent,
    ...opts.sent,
    dropped,
  });
}
