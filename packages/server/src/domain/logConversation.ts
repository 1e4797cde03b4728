/**
 * A log entry read back as a conversation and as a request to send again (Replay): the messages
 * of the provider request it stored (OpenAI's, Anthropic's or Gemini's shape) in the native
 * chat shape, the answer as one more message, and the native body that replays it through its
 * gate. Read from what was stored, never guessed: a shape not recognised gives null.
 */
import { TASK_ENDPOINTS, type TaskType } from '@gatehouse/rules/gate';

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** One message as the native /v3/chat takes it (OpenAI's chat shape). */
export type ConversationMessage = {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content: unknown;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
};

/** The text of Anthropic or Gemini content blocks, joined; non-text blocks dropped. */
function blockText(blocks: unknown): string {
  if (typeof blocks === 'string') return blocks;
  if (!Array.isArray(blocks)) return '';
  return blocks
    .map((b) => (isRecord(b) ? (text(b.text) ?? '') : ''))
    .filter((t) => t !== '')
    .join('\n');
}

function anthropicMessages(body: Json): ConversationMessage[] {
  const out: ConversationMessage[] = [];
  const system = blockText(body.system);
  if (system) out.push({ role: 'system', content: system });
  for (const m of body.messages as unknown[]) {
    if (!isRecord(m)) continue;
    const blocks = Array.isArray(m.content) ? m.content.filter(isRecord) : [];
    const calls = blocks.filter((b) => b.type === 'tool_use');
    for (const r of blocks.filter((b) => b.type === 'tool_result')) {
      out.push({ role: 'tool', tool_call_id: text(r.tool_use_id) ?? '', content: blockText(r.content) });
    }
    const content = blockText(m.content);
    if (m.role === 'assistant') {
      if (content || calls.length > 0)
        out.push({
          role: 'assistant',
          content: content || null,
          ...(calls.length > 0 && {
            tool_calls: calls.map((c) => ({
              id: text(c.id) ?? '',
              type: 'function' as const,
              function: { name: text(c.name) ?? '', arguments: JSON.stringify(c.input ?? {}) },
            })),
          }),
        });
    } else if (content) out.push({ role: 'user', content });
  }
  return out;
}

function geminiMessages(body: Json): ConversationMessage[] {
  const out: ConversationMessage[] = [];
  const system = isRecord(body.systemInstruction) ? blockText(body.systemInstruction.parts) : '';
  if (system) out.push({ role: 'system', content: system });
  for (const c of body.contents as unknown[]) {
    if (!isRecord(c)) continue;
    const content = blockText(c.parts);
    if (content) out.push({ role: c.role === 'model' ? 'assistant' : 'user', content });
  }
  return out;
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/** The messages a stored chat request held, in the native shape; null where it holds none. */
export function requestMessages(request: unknown): ConversationMessage[] | null {
  if (!isRecord(request)) return null;
  if (Array.isArray(request.contents)) return geminiMessages(request);
  if (!Array.isArray(request.messages)) return null;
  const anthropic =
    request.system !== undefined ||
    request.messages.some(
      (m) =>
        isRecord(m) &&
        Array.isArray(m.content) &&
        m.content.some((b) => isRecord(b) && (b.type === 'tool_use' || b.type === 'tool_result')),
    );
  if (anthropic) return anthropicMessages(request);
  return request.messages
    .filter((m): m is Json => isRecord(m) && ROLES.has(String(m.role)))
    .map((m) => ({
      role: m.role as ConversationMessage['role'],
      content: m.content ?? null,
      ...(Array.isArray(m.tool_calls) && { tool_calls: m.tool_calls as ConversationMessage['tool_calls'] }),
      ...(typeof m.tool_call_id === 'string' && { tool_call_id: m.tool_call_id }),
    }));
}

/** The answer a stored chat response held, as an assistant message; null where none is found. */
export function answerMessage(response: unknown): ConversationMessage | null {
  if (!isRecord(response)) return null;
  const choice = Array.isArray(response.choices) ? response.choices[0] : undefined;
  if (isRecord(choice) && isRecord(choice.message)) {
    const m = choice.message;
    return {
      role: 'assistant',
      content: m.content ?? null,
      ...(Array.isArray(m.tool_calls) && { tool_calls: m.tool_calls as ConversationMessage['tool_calls'] }),
    };
  }
  if (response.type === 'message' && Array.isArray(response.content)) {
    return anthropicMessages({ messages: [{ role: 'assistant', content: response.content }] })[0] ?? null;
  }
  const candidate = Array.isArray(response.candidates) ? response.candidates[0] : undefined;
  if (isRecord(candidate) && isRecord(candidate.content)) {
    return { role: 'assistant', content: blockText(candidate.content.parts) };
  }
  return null;
}

/** The request's messages then its answer: what the entry view shows as a conversation. */
export function conversationOf(entry: { providerRequest: unknown; providerResponse: unknown }) {
  const messages = requestMessages(entry.providerRequest);
  if (!messages) return null;
  const answer = answerMessage(entry.providerResponse);
  return answer ? [...messages, answer] : messages;
}

/** Which task type an endpoint serves, by its last segment (/v3/chat, /v1/chat/completions, …). */
function taskTypeOf(endpoint: string): TaskType | null {
  if (/\/(chat|chat\/completions|messages|responses)$/.test(endpoint)) return 'chat';
  if (/\/embeddings$/.test(endpoint)) return 'embeddings';
  if (/\/moderations?$/.test(endpoint)) return 'moderation';
  if (/\/(tts|audio\/speech)$/.test(endpoint)) return 'tts';
  if (/\/(image|images\/generations)$/.test(endpoint)) return 'image';
  return null;
}

const num = (v: unknown) => (typeof v === 'number' ? v : undefined);

/** The chat parameters a stored request carried, as the native body names them. */
function chatParams(request: Json): Json {
  const config = isRecord(request.generationConfig) ? request.generationConfig : {};
  const maxTokens =
    num(request.max_completion_tokens) ?? num(request.max_tokens) ?? num(config.maxOutputTokens);
  const temperature = num(request.temperature) ?? num(config.temperature);
  return {
    ...(temperature !== undefined && { temperature }),
    ...(maxTokens !== undefined && { maxTokens }),
  };
}

/**
 * The native request that sends the entry's request through its gate again: `{ endpoint, data }`
 * for POST endpoint with `{ gateId, data }`. The gate's own system prompt, which it adds to every
 * request, is left out (it adds it again). Null for a request it cannot be rebuilt from (a file
 * not kept, a type without a text input, nothing stored).
 */
export function replayRequestOf(
  entry: { endpoint: string; providerRequest: unknown; clientRequest: unknown },
  gateSystemPrompt: string | null,
): { endpoint: string; data: Json } | null {
  const type = taskTypeOf(entry.endpoint);
  const endpoint = type && TASK_ENDPOINTS[type];
  if (!type || !endpoint) return null;
  const client = isRecord(entry.clientRequest) ? entry.clientRequest : null;
  // A refused request never reached a provider: what its client sent is the request.
  const sent = isRecord(entry.providerRequest)
    ? entry.providerRequest
    : isRecord(client?.data)
      ? client.data
      : client;
  if (!sent) return null;
  if (type === 'chat') {
    let messages = requestMessages(sent);
    if (!messages || messages.length === 0) return null;
    const first = messages[0];
    if (gateSystemPrompt && first?.role === 'system' && first.content === gateSystemPrompt)
      messages = messages.slice(1);
    return { endpoint, data: { messages, ...chatParams(sent) } };
  }
  if (type === 'image') {
    const prompt = text(sent.prompt);
    return prompt === undefined ? null : { endpoint, data: { prompt } };
  }
  const input = sent.input;
  if (typeof input !== 'string' && !Array.isArray(input)) return null;
  return { endpoint, data: { input } };
}
