/** What the task wires share: auth headers and endpoint URLs per wire format. */
import type { ProviderConnection } from '../registry.ts';
import { ProviderError } from '../types.ts';

/** `Authorization: Bearer` for the OpenAI family (no header where none is configured: vLLM, Ollama). */
export function bearer(conn: ProviderConnection): Record<string, string> {
  return conn.apiKey ? { authorization: `Bearer ${conn.apiKey}` } : {};
}

export function geminiHeaders(conn: ProviderConnection): Record<string, string> {
  return { 'x-goog-api-key': conn.apiKey ?? '' };
}

/**
 * An endpoint of an OpenAI-format provider, beside its chat-completions path: `/embeddings` of
 * OpenAI's `…/v1` is `…/v1/embeddings`, and of Mistral's `/v1/chat/completions` `/v1/embeddings`.
 */
export function openAIPath(conn: ProviderConnection, path: string): string {
  const wire = conn.descriptor.wire;
  const chatPath = wire.format === 'openai' ? wire.dialect.chatPath : '/chat/completions';
  return `${conn.baseUrl}${chatPath.replace(/\/chat\/completions$/, '')}${path}`;
}

/** A provider of this wire format cannot serve the task: the attempt fails, and routing moves on. */
export function unsupported(conn: ProviderConnection, what: string): ProviderError {
  return new ProviderError('not_configured', `${conn.descriptor.name} does not serve ${what} here`);
}
