/**
 * OpenAI's Responses request (POST /v1/responses), checked and turned into the gateway's
 * ChatRequest, whatever provider the gate then routes to. The gateway keeps no responses: the
 * whole conversation comes as `input`, and what would need stored state is refused by name.
 */
import { boundedJsonObject } from '@gatehouse/rules/jsonLimits';
import { z } from 'zod';
import {
  type ChatRequest,
  imageUrl,
  jsonSchemaFormat,
  metadata,
  params,
  toolFunction,
} from '../../dataplane/request.ts';
import {
  type ChatMessage,
  type ContentPart,
  contentOf,
  type ResponseFormat,
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
  };
}
