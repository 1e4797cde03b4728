/**
 * Everything Gatehouse knows about each provider, in one place: how it is configured (its
 * environment variables and default base URL), which wire format its adapter speaks and with
 * which differences, what it serves natively, and where its prices come from. Config, the
 * adapter registry and the catalog all read this table.
 */
import type { TaskType } from '@gatehouse/rules/gate';
import type { OpenAIDialect } from './openai.ts';

/** How a provider of OpenAI's chat-completions format differs from OpenAI (see OpenAIDialect). */
export type WireDialect = Omit<OpenAIDialect, 'url' | 'apiKey' | 'extraHeaders' | 'responsesUrl'> & {
  /** The chat-completions path under the base URL. */
  chatPath: string;
  /** The Responses path under the base URL, where the provider has that API. */
  responsesPath?: string;
};

export type Wire =
  | { format: 'openai'; dialect: WireDialect }
  | { format: 'anthropic' }
  | { format: 'gemini' }
  | { format: 'mock' };

export type ProviderDescriptor = {
  id: string;
  name: string;
  /** What makes it configured: an API key, a base URL (self-hosted servers), or nothing (mock). */
  needs: 'key' | 'url' | 'nothing';
  /** Environment variables, when it has any: `{ID}_API_KEY` and `{ID}_BASE_URL`. */
  env: { apiKey: string; baseUrl: string } | null;
  /** Used when the base URL variable is unset; null: it must be set. */
  defaultBaseUrl: string | null;
  wire: Wire;
  /** Task types the adapter serves natively. */
  taskTypes: TaskType[];
  /** Structured output it takes natively; the rest is put in the prompt and checked here. */
  structuredOutput: { jsonSchema: boolean; jsonObject: boolean };
  /**
   * Where its models and prices come from: a provider of @pydantic/genai-prices, the local
   * table (mock), or any model name at no charge (self-hosted servers serve what they pulled).
   */
  prices: { source: 'genai-prices'; id: string } | { source: 'local' } | { source: 'self-hosted' };
};

const OPENAI_COMPATIBLE: WireDialect = {
  chatPath: '/chat/completions',
  maxTokensField: 'max_tokens',
  seedField: 'seed',
  requiredToolChoice: 'required',
  streamOptions: true,
  developerRole: false,
  messageNames: true,
  toolCallIds: 'any',
  forwards: [],
};

/** A provider of the OpenAI-compatible family, configured by key or by base URL. */
function compatible(
  id: string,
  name: string,
  defaultBaseUrl: string | null,
  prices: ProviderDescriptor['prices'],
): ProviderDescriptor {
  return {
    id,
    name,
    needs: defaultBaseUrl === null ? 'url' : 'key',
    env: envOf(id),
    defaultBaseUrl,
    wire: { format: 'openai', dialect: OPENAI_COMPATIBLE },
    taskTypes: ['chat'],
    structuredOutput: { jsonSchema: false, jsonObject: true },
    prices,
  };
}

function envOf(id: string) {
  const prefix = id.toUpperCase();
  return { apiKey: `${prefix}_API_KEY`, baseUrl: `${prefix}_BASE_URL` };
}

export const PROVIDERS: readonly ProviderDescriptor[] = [
  {
    id: 'openai',
    name: 'OpenAI',
    needs: 'key',
    env: envOf('openai'),
    defaultBaseUrl: 'https://api.openai.com/v1',
    wire: {
      format: 'openai',
      dialect: {
        ...OPENAI_COMPATIBLE,
        maxTokensField: 'max_completion_tokens',
        developerRole: true,
        // Same family, same wire: OpenAI takes the drop-in routes' bodies as their clients wrote them.
        forwards: ['openai-chat', 'openai-responses'],
        responsesPath: '/responses',
      },
    },
    taskTypes: ['chat'],
    structuredOutput: { jsonSchema: true, jsonObject: true },
    prices: { source: 'genai-prices', id: 'openai' },
  },
  {
    id: 'anthropic',
    name: 'Anthropic',
    needs: 'key',
    env: envOf('anthropic'),
    defaultBaseUrl: 'https://api.anthropic.com',
    wire: { format: 'anthropic' },
    taskTypes: ['chat'],
    structuredOutput: { jsonSchema: false, jsonObject: false },
    prices: { source: 'genai-prices', id: 'anthropic' },
  },
  {
    id: 'gemini',
    name: 'Google Gemini',
    needs: 'key',
    env: envOf('gemini'),
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    wire: { format: 'gemini' },
    taskTypes: ['chat'],
    structuredOutput: { jsonSchema: true, jsonObject: true },
    prices: { source: 'genai-prices', id: 'google' },
  },
  {
    id: 'mistral',
    name: 'Mistral',
    needs: 'key',
    env: envOf('mistral'),
    defaultBaseUrl: 'https://api.mistral.ai',
    wire: {
      format: 'openai',
      dialect: {
        chatPath: '/v1/chat/completions',
        maxTokensField: 'max_tokens',
        seedField: 'random_seed',
        requiredToolChoice: 'any',
        streamOptions: false,
        developerRole: false,
        messageNames: false,
        toolCallIds: 'nine-alphanumeric',
        forwards: [],
      },
    },
    taskTypes: ['chat'],
    structuredOutput: { jsonSchema: true, jsonObject: true },
    prices: { source: 'genai-prices', id: 'mistral' },
  },
  compatible('groq', 'Groq', 'https://api.groq.com/openai/v1', { source: 'genai-prices', id: 'groq' }),
  compatible('deepseek', 'DeepSeek', 'https://api.deepseek.com/v1', {
    source: 'genai-prices',
    id: 'deepseek',
  }),
  compatible('xai', 'xAI', 'https://api.x.ai/v1', { source: 'genai-prices', id: 'x-ai' }),
  compatible('together', 'Together', 'https://api.together.xyz/v1', {
    source: 'genai-prices',
    id: 'together',
  }),
  compatible('openrouter', 'OpenRouter', 'https://openrouter.ai/api/v1', {
    source: 'genai-prices',
    id: 'openrouter',
  }),
  compatible('ollama', 'Ollama', null, { source: 'self-hosted' }),
  compatible('vllm', 'vLLM', null, { source: 'self-hosted' }),
  {
    id: 'mock',
    name: 'Mock',
    needs: 'nothing',
    env: null,
    defaultBaseUrl: null,
    wire: { format: 'mock' },
    taskTypes: ['chat'],
    structuredOutput: { jsonSchema: true, jsonObject: true },
    prices: { source: 'local' },
  },
];

const BY_ID = new Map(PROVIDERS.map((p) => [p.id, p]));

export function providerDescriptor(id: string): ProviderDescriptor | undefined {
  return BY_ID.get(id);
}
