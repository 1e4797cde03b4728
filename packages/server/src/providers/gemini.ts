/** Google Gemini's generateContent API (v1beta), plain and streamed (alt=sse). */
import { randomBytes } from 'node:crypto';
import { postJson, postSse } from './http.ts';
import {
  type CallOptions,
  type ChatCompletion,
  type ChatMessage,
  type ChatParams,
  type ContentPart,
  type FinishReason,
  type ProviderAdapter,
  ProviderError,
  parseDataUrl,
  parseToolArguments,
  type ToolCall,
  textOf,
  type Usage,
  withWireRequest,
} from './types.ts';

type Part =
  | { text: string; thought?: boolean }
  | { inlineData: { mimeType: string; data: string } }
  | { fileData: { fileUri: string; mimeType?: string } }
  | { functionCall: { name: string; args: unknown; id?: string }; thoughtSignature?: string }
  | { functionResponse: { name: string; response: unknown; id?: string } };

type Content = { role: 'user' | 'model'; parts: Part[] };

type WireResponse = {
  candidates?: { content?: { parts?: Part[] }; finishReason?: string }[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: {
    promptTokenCount?: number;
    candidatesTokenCount?: number;
    cachedContentTokenCount?: number;
    thoughtsTokenCount?: number;
  };
};

const BLOCKED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

function partsOf(content: string | ContentPart[] | null): Part[] {
  if (content == null) return [];
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  return content.map((part): Part => {
    if (part.type === 'text') return { text: part.text };
    const data = parseDataUrl(part.image_url.url);
    return data
      ? { inlineData: { mimeType: data.mediaType, data: data.data } }
      : { fileData: { fileUri: part.image_url.url } };
  });
}

/** A tool's output as the JSON object functionResponse needs: its own when it is one, else wrapped. */
function toolResponse(text: string): unknown {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed;
  } catch {
    // Not JSON: passed on as text.
  }
  return { content: text };
}

/**
 * Gemini 3 signs the first function call of each step (`thoughtSignature`) and refuses a replayed
 * call without it. The signature cannot travel through OpenAI-shaped tool calls, so the adapter
 * keeps it by tool-call id; a call it never saw (another model's, or from before a restart) gets
 * the placeholder Google documents for histories that carry no signature.
 */
export const SIGNATURE_PLACEHOLDER = 'skip_thought_signature_validator';
const KEPT_SIGNATURES = 10_000;

function requiresSignatures(model: string): boolean {
  const major = /^gemini-(\d+)/.exec(model)?.[1];
  return major !== undefined && Number(major) >= 3;
}

export type SignatureOptions = {
  signatureOf?: (toolCallId: string) => string | undefined;
  /** Gives the first call of each model turn a signature even when none was kept (Gemini 3). */
  requireSignatures?: boolean;
};

export function toGeminiContents(
  messages: ChatMessage[],
  opts: SignatureOptions = {},
): { system?: string; contents: Content[] } {
  const system: string[] = [];
  const contents: Content[] = [];
  const toolNames = new Map<string, string>();
  const push = (role: Content['role'], parts: Part[]) => {
    const last = contents.at(-1);
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') system.push(textOf(m.content));
    else if (m.role === 'user') push('user', partsOf(m.content));
    else if (m.role === 'assistant') {
      for (const c of m.tool_calls ?? []) toolNames.set(c.id, c.function.name);
      push('model', [
        ...partsOf(m.content),
        ...(m.tool_calls ?? []).map((c, i): Part => {
          const signature =
            opts.signatureOf?.(c.id) ??
            (i === 0 && opts.requireSignatures ? SIGNATURE_PLACEHOLDER : undefined);
          return {
            functionCall: { name: c.function.name, args: parseToolArguments(c.function.arguments) },
            ...(signature && { thoughtSignature: signature }),
          };
        }),
      ]);
    } else if (m.role === 'tool') {
      push('user', [
        {
          functionResponse: {
            name: toolNames.get(m.tool_call_id) ?? m.tool_call_id,
            response: toolResponse(textOf(m.content)),
          },
        },
      ]);
    }
  }
  return { ...(system.length > 0 && { system: system.join('\n\n') }), contents };
}

function toolConfigOf(choice: ChatParams['toolChoice']) {
  if (choice === undefined) return undefined;
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
}

export function geminiRequestBody(params: ChatParams, opts: SignatureOptions = {}) {
  const { system, contents } = toGeminiContents(params.messages, opts);
  const format = params.responseFormat;
  const toolConfig = toolConfigOf(params.toolChoice);
  const generationConfig = {
    ...(params.temperature !== undefined && { temperature: params.temperature }),
    ...(params.topP !== undefined && { topP: params.topP }),
    ...(params.maxTokens !== undefined && { maxOutputTokens: params.maxTokens }),
    ...(params.stop?.length && { stopSequences: params.stop }),
    ...(params.seed !== undefined && { seed: params.seed }),
    ...(format && format.type !== 'text' && { responseMimeType: 'application/json' }),
    ...(format?.type === 'json_schema' && { responseJsonSchema: format.json_schema.schema }),
  };
  return {
    contents,
    ...(system && { systemInstruction: { parts: [{ text: system }] } }),
    ...(Object.keys(generationConfig).length > 0 && { generationConfig }),
    ...(params.tools?.length && {
      tools: [
        {
          functionDeclarations: params.tools.map((t) => ({
            name: t.function.name,
            ...(t.function.description && { description: t.function.description }),
            ...(t.function.parameters && { parameters: t.function.parameters }),
          })),
        },
      ],
    }),
    ...(toolConfig && params.tools?.length && { toolConfig }),
  };
}

/** The usage reported; a figure that is no count is passed on for the pipeline to refuse (openai.ts). */
function usageOf(usage: WireResponse['usageMetadata']): Usage | null {
  if (!usage || usage.promptTokenCount == null) return null;
  return {
    promptTokens: usage.promptTokenCount,
    completionTokens: (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0),
    ...(usage.cachedContentTokenCount && { cachedTokens: usage.cachedContentTokenCount }),
    ...(usage.thoughtsTokenCount && { reasoningTokens: usage.thoughtsTokenCount }),
  };
}

/** A tool-call id unique across answers, so a kept signature can never be handed to another call. */
const newCallId = () => `call_${randomBytes(12).toString('hex')}`;

type CallIds = (part: Extract<Part, { functionCall: unknown }>) => string;

function resultOf(body: unknown, response: WireResponse, idOf: CallIds): ChatCompletion {
  if (response.promptFeedback?.blockReason) {
    throw new ProviderError(
      'content_policy',
      `The prompt was blocked: ${response.promptFeedback.blockReason}`,
      null,
      response,
    );
  }
  const candidate = response.candidates?.[0];
  if (!candidate)
    throw new ProviderError('invalid_response', 'The provider answered without a candidate', null, response);
  if (candidate.finishReason && BLOCKED.has(candidate.finishReason)) {
    throw new ProviderError(
      'content_policy',
      `The answer was blocked: ${candidate.finishReason}`,
      null,
      response,
    );
  }
  const parts = candidate.content?.parts ?? [];
  const texts = parts.filter(
    (p): p is { text: string } => 'text' in p && !(p as { thought?: boolean }).thought,
  );
  const toolCalls: ToolCall[] = parts
    .filter((p): p is Extract<Part, { functionCall: unknown }> => 'functionCall' in p)
    .map((p) => ({
      id: idOf(p),
      type: 'function',
      function: { name: p.functionCall.name, arguments: JSON.stringify(p.functionCall.args ?? {}) },
    }));
  const finishReason: FinishReason =
    toolCalls.length > 0 ? 'tool_calls' : candidate.finishReason === 'MAX_TOKENS' ? 'length' : 'stop';
  return {
    content: texts.length > 0 ? texts.map((p) => p.text).join('') : null,
    toolCalls,
    finishReason,
    usage: usageOf(response.usageMetadata),
    providerRequest: body,
    providerResponse: response,
  };
}

export function createGeminiAdapter(opts: { baseUrl: string; apiKey: string | undefined }): ProviderAdapter {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const headers = { 'x-goog-api-key': opts.apiKey ?? '' };
  const signatures = new Map<string, string>();

  /** Names each call of an answer once, keeping its signature for the follow-up request. */
  function callIds(): CallIds {
    const named = new WeakMap<object, string>();
    return (part) => {
      let id = named.get(part);
      if (!id) {
        id = part.functionCall.id ?? newCallId();
        named.set(part, id);
        if (part.thoughtSignature) {
          if (signatures.size >= KEPT_SIGNATURES) signatures.delete(signatures.keys().next().value as string);
          signatures.set(id, part.thoughtSignature);
        }
      }
      return id;
    };
  }

  const bodyFor = (model: string, params: ChatParams) =>
    geminiRequestBody(params, {
      signatureOf: (id) => signatures.get(id),
      requireSignatures: requiresSignatures(model),
    });

  async function complete(model: string, params: ChatParams, options: CallOptions) {
    const body = bodyFor(model, params);
    const url = `${base}/v1beta/models/${encodeURIComponent(model)}:generateContent`;
    return resultOf(body, (await postJson(url, headers, body, options.signal)) as WireResponse, callIds());
  }

  async function stream(model: string, params: ChatParams, options: CallOptions) {
    const body = bodyFor(model, params);
    const idOf = callIds();
    const url = `${base}/v1beta/models/${encodeURIComponent(model)}:streamGenerateContent?alt=sse`;
    const parts: Part[] = [];
    let finishReason: string | undefined;
    let usageMetadata: WireResponse['usageMetadata'];
    let promptFeedback: WireResponse['promptFeedback'];
    let calls = 0;
    await postSse(url, headers, body, options.signal, (event) => {
      const chunk = JSON.parse(event.data) as WireResponse & { error?: { message?: string; code?: number } };
      if (chunk.error) {
        throw new ProviderError(
          'http',
          `Provider stream failed: ${chunk.error.message}`,
          chunk.error.code ?? 500,
          chunk,
        );
      }
      promptFeedback ??= chunk.promptFeedback;
      if (chunk.usageMetadata) usageMetadata = chunk.usageMetadata;
      const candidate = chunk.candidates?.[0];
      if (candidate?.finishReason) finishReason = candidate.finishReason;
      for (const part of candidate?.content?.parts ?? []) {
        if ('text' in part && !part.thought) {
          const last = parts.at(-1);
          if (last && 'text' in last) last.text += part.text;
          else parts.push({ text: part.text });
          if (part.text) options.onDelta?.({ content: part.text });
        } else if ('functionCall' in part) {
          parts.push(part);
          const index = calls++;
          options.onDelta?.({
            toolCalls: [
              {
                index,
                id: idOf(part),
                name: part.functionCall.name,
                arguments: JSON.stringify(part.functionCall.args ?? {}),
              },
            ],
          });
        }
      }
    });
    if (!finishReason && !promptFeedback?.blockReason) {
      throw new ProviderError('network', 'The provider closed the stream before it finished');
    }
    return resultOf(
      body,
      {
        candidates: [{ content: { parts }, ...(finishReason && { finishReason }) }],
        ...(promptFeedback && { promptFeedback }),
        ...(usageMetadata && { usageMetadata }),
      },
      idOf,
    );
  }

  return {
    chat: (model, params, options) =>
      withWireRequest(
        () => bodyFor(model, params),
        (options.onDelta ? stream : complete)(model, params, options),
      ),
  };
}
