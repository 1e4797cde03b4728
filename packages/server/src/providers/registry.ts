import type { ProviderSetting, ProviderSettings } from '../config.ts';
import { createAnthropicAdapter } from './anthropic.ts';
import { PROVIDERS, type ProviderDescriptor, providerDescriptor } from './descriptors.ts';
import { createGeminiAdapter } from './gemini.ts';
import { createMockAdapter } from './mock.ts';
import { createOpenAIAdapter } from './openai.ts';
import { redactor, secretsOf, withRedaction } from './redaction.ts';
import type { ProviderAdapter } from './types.ts';

/** Where a configured provider is and how to sign requests to it: what the task wires read. */
export type ProviderConnection = {
  descriptor: ProviderDescriptor;
  /** Without a trailing slash. */
  baseUrl: string;
  apiKey: string | undefined;
  mockLatencyMs: number;
};

export type ProviderRegistry = {
  /** The provider's connection, or null when it is not configured. */
  connection(provider: string): ProviderConnection | null;
  /** The adapter for a provider, or null when it has no credentials or endpoint configured. */
  adapter(provider: string): ProviderAdapter | null;
  /** The providers that have an adapter: those a plain model name may resolve to when several serve it. */
  configured: ReadonlySet<string>;
  nativeResponseFormat(provider: string, type: 'json_object' | 'json_schema'): boolean;
  /** Every configured provider's credential taken out of a text the log keeps (a client's body). */
  redact(text: string): string;
};

function adapterFor(
  descriptor: ProviderDescriptor,
  s: ProviderSetting,
  mockLatencyMs: number,
): ProviderAdapter {
  const baseUrl = s.baseUrl.replace(/\/+$/, '');
  const { wire } = descriptor;
  switch (wire.format) {
    case 'anthropic':
      return createAnthropicAdapter({ baseUrl, apiKey: s.apiKey });
    case 'gemini':
      return createGeminiAdapter({ baseUrl, apiKey: s.apiKey });
    case 'mock':
      return createMockAdapter({ latencyMs: mockLatencyMs });
    case 'openai': {
      const { chatPath, responsesPath, ...dialect } = wire.dialect;
      return createOpenAIAdapter({
        url: `${baseUrl}${chatPath}`,
        ...(responsesPath !== undefined && { responsesUrl: `${baseUrl}${responsesPath}` }),
        apiKey: s.apiKey,
        ...dialect,
      });
    }
  }
}

export function createProviderRegistry(settings: ProviderSettings): ProviderRegistry {
  const adapters = new Map<string, ProviderAdapter>();
  const connections = new Map<string, ProviderConnection>();
  for (const descriptor of PROVIDERS) {
    const setting = settings.providers[descriptor.id];
    if (!setting?.configured) continue;
    // The provider's key kept out of its streamed answers, whichever adapter speaks to it.
    const adapter = adapterFor(descriptor, setting, settings.mockLatencyMs);
    adapters.set(descriptor.id, withRedaction(adapter, secretsOf([setting.apiKey])));
    connections.set(descriptor.id, {
      descriptor,
      baseUrl: setting.baseUrl.replace(/\/+$/, ''),
      apiKey: setting.apiKey,
      mockLatencyMs: settings.mockLatencyMs,
    });
  }
  const secrets = secretsOf([...connections.values()].map((c) => c.apiKey));
  return {
    connection: (provider) => connections.get(provider) ?? null,
    adapter: (provider) => adapters.get(provider) ?? null,
    configured: new Set(adapters.keys()),
    nativeResponseFormat: (provider, type) => {
      const native = providerDescriptor(provider)?.structuredOutput;
      return (type === 'json_schema' ? native?.jsonSchema : native?.jsonObject) ?? false;
    },
    redact: redactor(secrets),
  };
}
