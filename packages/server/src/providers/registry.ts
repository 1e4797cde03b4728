import type { ProviderSettings } from '../config.ts';
import { createAnthropicAdapter } from './anthropic.ts';
import { createGeminiAdapter } from './gemini.ts';
import { createMockAdapter } from './mock.ts';
import { createOpenAIAdapter } from './openai.ts';
import type { ProviderAdapter } from './types.ts';

/** Providers whose API takes a JSON schema for the answer; the others get it in the prompt. */
const NATIVE_JSON_SCHEMA = new Set(['openai', 'mistral', 'gemini', 'mock']);
/** Providers with a JSON mode of their own (response_format json_object or its like). */
const NATIVE_JSON_OBJECT = new Set([
  ...NATIVE_JSON_SCHEMA,
  'groq',
  'deepseek',
  'xai',
  'together',
  'openrouter',
  'ollama',
  'vllm',
]);

export type ProviderRegistry = {
  /** The adapter for a provider, or null when it has no credentials or endpoint configured. */
  adapter(provider: string): ProviderAdapter | null;
  nativeResponseFormat(provider: string, type: 'json_object' | 'json_schema'): boolean;
};

export function createProviderRegistry(settings: ProviderSettings): ProviderRegistry {
  const adapters = new Map<string, ProviderAdapter>();
  for (const [id, s] of Object.entries(settings.providers)) {
    if (!s.configured) continue;
    const base = s.baseUrl.replace(/\/+$/, '');
    if (id === 'anthropic') adapters.set(id, createAnthropicAdapter({ baseUrl: base, apiKey: s.apiKey }));
    else if (id === 'gemini') adapters.set(id, createGeminiAdapter({ baseUrl: base, apiKey: s.apiKey }));
    else if (id === 'mistral') {
      adapters.set(
        id,
        createOpenAIAdapter({
          url: `${base}/v1/chat/completions`,
          apiKey: s.apiKey,
          maxTokensField: 'max_tokens',
          seedField: 'random_seed',
          requiredToolChoice: 'any',
          streamOptions: false,
          developerRole: false,
          messageNames: false,
          toolCallIds: 'nine-alphanumeric',
        }),
      );
    } else {
      adapters.set(
        id,
        createOpenAIAdapter({
          url: `${base}/chat/completions`,
          apiKey: s.apiKey,
          maxTokensField: id === 'openai' ? 'max_completion_tokens' : 'max_tokens',
          seedField: 'seed',
          requiredToolChoice: 'required',
          streamOptions: true,
          developerRole: id === 'openai',
          messageNames: true,
          toolCallIds: 'any',
        }),
      );
    }
  }
  adapters.set('mock', createMockAdapter({ latencyMs: settings.mockLatencyMs }));
  return {
    adapter: (provider) => adapters.get(provider) ?? null,
    nativeResponseFormat: (provider, type) =>
      (type === 'json_schema' ? NATIVE_JSON_SCHEMA : NATIVE_JSON_OBJECT).has(provider),
  };
}
