/**
 * OpenAI's Responses request (POST /v1/responses). An OpenAI model gets the body as the client
 * sent it (only the gate's changes applied, see Forward); for any other provider it is turned
 * into the gateway's ChatRequest, leaving out (and naming) what has no meaning there. The gateway
 * keeps no responses: translated, the whole conversation comes as `input`, and what would need
 * stored state is refused by name.
 */
import { boundedJsonObject, isJsonObject } from '@gatehouse/rules/jsonLimits';
import { z } from 'zod';
import { customArguments, customToolFunction } from '../../dataplane/customTools.ts';
import {
  type ChatRequest,
  doorFields,
  dropName,
  imageUrl,
  jsonSchemaFormat,
  knownFields,
  metadata,
  params,
  toolFunction,
  withForward,
} from '../../dataplane/request.ts';
import { parseWith } from '../../domain/errors.ts';
import {
  type ChatMessage,
  type ContentPart,
  contentOf,
  REASONING_EFFORTS,
  type ResponseFormat,
  type Sent,
  type TextPart,
  type ToolCall,
  type ToolChoice,
} from '../../providers/types.ts';

const text = z.string().max(5_000_000);

const inputText = z.object({ type: z.literal('input_text'), text });
const outputText = z.object({ type: z.literal('output_text'), text });
const refusal = z.object({ type: z.literal('refusal'), refusal: text });
const inputImage = z.object({
  type: z.literal('input_image'),
  image_url: z.string('must be an image URL (file ids are not supported)').pipe(imageUrl),
  detail: z.enum(['low', 'high', 'auto', 'original']).optional(),
});

const ONLY = (what: string) => ({ error: `only ${what} are supported` });

/** Content given as a string is one text part, so a bad part is named by its own path. */
const parts = <T extends z.ZodType>(type: 'input_text' | 'output_text', list: z.ZodArray<T>) =>
  z.preprocess((v) => (typeof v === 'string' ? [{ type, text: v }] : v), list);

const textParts = z.discriminatedUnion('type', [inputText, outputText], ONLY('text parts'));
const message = z.discriminatedUnion('role', [
  z.object({
    type: z.literal('message'),
    role: z.literal('user'),
    content: parts(
      'input_text',
      z
        .array(
          z.discriminatedUnion('type', [inputText, inputImage], ONLY('input_text and input_image parts')),
        )
        .min(1, 'must hold at least one part'),
    ),
  }),
  z.object({
    type: z.literal('message'),
    role: z.literal('assistant'),
    content: parts(
      'output_text',
      z.array(
        z.discriminatedUnion('type', [outputText, inputText, refusal], ONLY('output_text and refusal parts')),
      ),
    ),
  }),
  z.object({
    type: z.literal('message'),
    role: z.enum(['system', 'developer']),
    content: parts('input_text', z.array(textParts)),
  }),
]);

const functionCall = z.object({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});

const functionCallOutput = z.object({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1),
  output: z.union([
    text,
    z.array(z.discriminatedUnion('type', [inputText, inputImage], ONLY('input_text and input_image parts'))),
  ]),
});

/** An item with a role and no type is a message (OpenAI's "easy input message"). */
const item = z.preprocess(
  (v) => (v && typeof v === 'object' && !('type' in v) && 'role' in v ? { ...v, type: 'message' } : v),
  z.discriminatedUnion(
    'type',
    [message, functionCall, functionCallOutput],
    ONLY('message, function_call and function_call_output items'),
  ),
);

const tool = z.object({
  // Built-in tools (web search, file search, code interpreter…) run at OpenAI; a gateway cannot route them.
  type: z.literal('function', 'only function tools are supported'),
  ...toolFunction.shape,
  description: z.string().nullish(),
  parameters: boundedJsonObject.nullish(),
});

const toolChoice = z.union(
  [z.enum(['auto', 'none', 'required']), z.object({ type: z.literal('function'), name: z.string().min(1) })],
  { error: 'must be "auto", "none", "required" or {type: "function", name}' },
);

const format = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({ type: z.literal('json_schema'), ...jsonSchemaFormat.shape }),
]);

/** A field that would need state the gateway does not keep: only its absence (or null/false) passes. */
const refused = (why: string) =>
  z
    .unknown()
    .refine((v) => v === undefined || v === null || v === false, why)
    .optional();

/** Only the effort has a meaning elsewhere (a thinking budget); summaries are OpenAI's own. */
const reasoning = z.object({ effort: z.enum(REASONING_EFFORTS).nullish() }).nullish();

const NO_STATE = 'Gatehouse keeps no responses; send the whole conversation as input';

export const responsesSchema = z.object({
  model: params.model,
  // A string is one user message; read as items, a bad item is named by its own path.
  input: z.preprocess(
    (v) => (typeof v === 'string' ? [{ type: 'message', role: 'user', content: v }] : v),
    z.array(item, 'must be a string or a list of items').min(1, 'must hold at least one item'),
  ),
  instructions: text.nullish(),
  max_output_tokens: params.maxTokens.nullish(),
  temperature: params.temperature.nullish(),
  top_p: params.topP.nullish(),
  stream: z.boolean().nullish(),
  tools: z.array(tool).max(128).optional(),
  tool_choice: toolChoice.optional(),
  text: z.object({ format: format.optional() }).nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  reasoning,
  metadata: metadata.nullish(),
  user: z.string().nullish(),
  gateId: z.uuid().optional(),
  store: refused(`${NO_STATE} (leave store out or set it to false)`),
  previous_response_id: refused(`${NO_STATE} instead of previous_response_id`),
  conversation: refused(`${NO_STATE} instead of a conversation`),
  background: refused(`background responses are not supported: ${NO_STATE}`),
  prompt: refused('stored prompts are not supported; send instructions and input'),
});

export type ResponsesBody = z.infer<typeof responsesSchema>;
type Item = z.infer<typeof item>;
type Part = z.infer<typeof inputText | typeof outputText | typeof refusal | typeof inputImage>;

function partOf(part: Part): ContentPart {
  switch (part.type) {
    case 'input_image':
      return {
        type: 'image_url',
        image_url: { url: part.image_url, ...(part.detail && { detail: part.detail }) },
      };
    case 'refusal':
      return { type: 'text', text: part.refusal };
    default:
      return { type: 'text', text: part.text };
  }
}

function messageOf(m: Extract<Item, { type: 'message' }>): ChatMessage {
  const content = contentOf(m.content.map(partOf));
  if (m.role === 'user') return { role: 'user', content };
  return { role: m.role, content: content as string | TextPart[] };
}

/** Items in order; consecutive function calls join the assistant turn before them, as chat wants. */
function messagesOf(input: ResponsesBody['input']): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const i of input) {
    if (i.type === 'function_call') {
      const call: ToolCall = {
        id: i.call_id,
        type: 'function',
        function: { name: i.name, arguments: i.arguments },
      };
      const last = out.at(-1);
      if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), call];
      else out.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (i.type === 'function_call_output') {
      const content = typeof i.output === 'string' ? i.output : contentOf(i.output.map(partOf));
      out.push({ role: 'tool', tool_call_id: i.call_id, content });
    } else out.push(messageOf(i));
  }
  return out;
}

function toolChoiceOf(choice: ResponsesBody['tool_choice']): ToolChoice | undefined {
  if (choice === undefined || typeof choice === 'string') return choice;
  return { type: 'function', function: { name: choice.name } };
}

function formatOf(f: z.infer<typeof format> | undefined): ResponseFormat | undefined {
  if (f?.type !== 'json_schema') return f;
  const { type, ...jsonSchema } = f;
  return { type, json_schema: jsonSchema };
}

/** `modelIsGate`: `model` is the gate's UUID, not a model the client asks for. */
export function fromResponses(body: ResponsesBody, opts: { modelIsGate: boolean }): ChatRequest {
  const system: ChatMessage[] = body.instructions ? [{ role: 'system', content: body.instructions }] : [];
  const toolChoice = toolChoiceOf(body.tool_choice);
  const responseFormat = formatOf(body.text?.format);
  return {
    messages: [...system, ...messagesOf(body.input)],
    stream: body.stream ?? false,
    ...(!opts.modelIsGate && { model: body.model }),
    ...(body.max_output_tokens != null && { maxTokens: body.max_output_tokens }),
    ...(body.temperature != null && { temperature: body.temperature }),
    ...(body.top_p != null && { topP: body.top_p }),
    ...(body.tools?.length && {
      tools: body.tools.map((t) => ({
        type: 'function' as const,
        function: {
          name: t.name,
          ...(t.description != null && { description: t.description }),
          ...(t.parameters != null && { parameters: t.parameters }),
          ...(t.strict != null && { strict: t.strict }),
        },
      })),
    }),
    ...(toolChoice && { toolChoice }),
    ...(responseFormat && { responseFormat }),
    ...(body.metadata && { metadata: body.metadata }),
    ...(body.reasoning?.effort && { reasoningEffort: body.reasoning.effort }),
  };
}

const TRANSLATED_FIELDS = new Set(Object.keys(responsesSchema.shape));
const PARTS_OF: Record<string, ReadonlySet<string>> = {
  user: new Set(['input_text', 'input_image']),
  assistant: new Set(['output_text', 'input_text', 'refusal']),
  system: new Set(['input_text', 'output_text']),
  developer: new Set(['input_text', 'output_text']),
};

/**
 * The body without what a translation cannot carry, and the names of what was left out:
 * unknown fields (`reasoning`, `include`, `text.verbosity`), item and part types
 * (`input.reasoning`, `content.input_file`) and hosted tools (`tools.web_search`). Custom tools
 * become function tools of one string argument, `input`, and their calls and outputs function
 * calls and outputs.
 */
export function translatable(body: unknown): { body: unknown; dropped: string[] } {
  if (!isJsonObject(body)) return { body, dropped: [] };
  const dropped: string[] = [];
  const kept = knownFields(body, TRANSLATED_FIELDS, dropped);
  if (isJsonObject(kept.reasoning)) {
    const { effort, ...settings } = kept.reasoning;
    dropped.push(...Object.keys(settings).map((k) => dropName(k, 'reasoning')));
    kept.reasoning = effort === undefined ? {} : { effort };
  }
  if (isJsonObject(kept.text)) {
    const { format, ...settings } = kept.text;
    dropped.push(...Object.keys(settings).map((k) => dropName(k, 'text')));
    kept.text = format === undefined ? {} : { format };
  }
  if (Array.isArray(kept.input)) {
    kept.input = kept.input.flatMap((item) => {
      if (!isJsonObject(item)) return [item];
      const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
      switch (type) {
        case 'message': {
          const known = PARTS_OF[String(item.role)];
          if (!Array.isArray(item.content) || !known) return [item];
          const content = item.content.filter((p) => {
            if (!isJsonObject(p) || typeof p.type !== 'string' || known.has(p.type)) return true;
            dropped.push(dropName(p.type, 'content'));
            return false;
          });
          return content.length === 0 && item.content.length > 0 ? [] : [{ ...item, content }];
        }
        case 'function_call':
        case 'function_call_output':
          return [item];
        case 'custom_tool_call':
          return [
            {
              type: 'function_call',
              call_id: item.call_id,
              name: item.name,
              arguments: customArguments(item.input),
            },
          ];
        case 'custom_tool_call_output':
          return [{ type: 'function_call_output', call_id: item.call_id, output: item.output }];
        default:
          dropped.push(dropName(type, 'input'));
          return [];
      }
    });
  }
  if (Array.isArray(kept.tools)) {
    // Hosted tools (web search, tool search, code interpreter…) run at OpenAI: another provider cannot.
    kept.tools = kept.tools.flatMap((t) => {
      if (!isJsonObject(t) || t.type === 'function') return [t];
      if (t.type === 'custom' && typeof t.name === 'string') {
        return [{ type: 'function', ...customToolFunction(t.name, t.description as string | undefined) }];
      }
      dropped.push(dropName(t.type, 'tools'));
      return [];
    });
  }
  const choice = kept.tool_choice;
  if (isJsonObject(choice) && choice.type !== 'function') {
    if (choice.type === 'custom') kept.tool_choice = { type: 'function', name: choice.name };
    else {
      dropped.push(dropName(choice.type, 'tool_choice'));
      delete kept.tool_choice;
    }
  }
  return { body: kept, dropped: [...new Set(dropped)] };
}

/** What /v1/responses reads of a body itself, whichever provider answers. */
const responsesDoor = z.looseObject({
  ...doorFields,
  input: z.union([z.string(), z.array(z.unknown())], 'must be a string or a list of items').optional(),
  max_output_tokens: z.number('must be a number').int().min(1).nullish(),
});

/**
 * A /v1/responses body as the data plane takes it: checked only for what the gateway reads,
 * kept as sent for an OpenAI model, translated (where it can be) for the others; `onParsed`
 * hears the translated body (what a translated answer repeats).
 */
export function responsesRequest(
  body: unknown,
  opts: { modelIsGate: boolean; sent: Sent },
  onParsed: (parsed: ResponsesBody) => void,
): ChatRequest {
  const checked = parseWith(responsesDoor, body);
  const { body: cleaned, dropped } = translatable(body);
  const { gateId: _gateId, ...asSent } = checked;
  const fallback: ChatRequest = {
    messages: [],
    stream: checked.stream ?? false,
    ...(!opts.modelIsGate && checked.model !== undefined && { model: checked.model }),
    ...(checked.max_output_tokens != null && { maxTokens: checked.max_output_tokens }),
    ...(checked.temperature != null && { temperature: checked.temperature }),
    ...(checked.top_p != null && { topP: checked.top_p }),
  };
  const translate = () => {
    const parsed = parseWith(responsesSchema, cleaned);
    onParsed(parsed);
    return fromResponses(parsed, opts);
  };
  return withForward(translate, fallback, { api: 'openai-responses', body: asSent, ...opts.sent, dropped });
}
