/**
 * A test file's provider emulators: each started with the key it checks, its servers' queues and
 * records emptied before every test, and closed after the file; `env` points the app's providers
 * at them (`<PROVIDER>_API_KEY` and `<PROVIDER>_BASE_URL` for each).
 */
import { afterAll, beforeEach } from 'vitest';
import { startAnthropicEmulator } from './anthropic.ts';
import { startGeminiEmulator } from './gemini.ts';
import { startOpenAIEmulator } from './openai.ts';
import type { Upstream } from './upstream.ts';

export type Emulator = { upstream: Upstream; baseUrl: string; apiKey: string };

type Specs = {
  /** `fields`: top-level body fields this Anthropic API knows beyond today's (a newer API). */
  anthropic?: { apiKey: string; fields?: string[] };
  openai?: { apiKey: string };
  mistral?: { apiKey: string };
  gemini?: { apiKey: string };
};

type Spec = { apiKey: string; fields?: string[] };

const START: Record<keyof Specs, (spec: Spec) => Promise<Emulator>> = {
  anthropic: (spec) => startAnthropicEmulator(spec.apiKey, spec.fields),
  openai: (spec) => startOpenAIEmulator('openai', spec.apiKey),
  mistral: (spec) => startOpenAIEmulator('mistral', spec.apiKey),
  gemini: (spec) => startGeminiEmulator(spec.apiKey),
};

export type Emulators<S extends Specs> = { [P in keyof S]-?: Emulator } & { env: Record<string, string> };

export async function useEmulators<S extends Specs>(specs: S): Promise<Emulators<S>> {
  const started: Record<string, Emulator> = {};
  const env: Record<string, string> = {};
  for (const [provider, spec] of Object.entries(specs) as [keyof Specs, Spec][]) {
    const emulator = await START[provider](spec);
    started[provider] = emulator;
    env[`${provider.toUpperCase()}_API_KEY`] = emulator.apiKey;
    env[`${provider.toUpperCase()}_BASE_URL`] = emulator.baseUrl;
  }
  const all = Object.values(started);
  beforeEach(() => {
    for (const emulator of all) emulator.upstream.reset();
  });
  afterAll(async () => {
    for (const emulator of all) await emulator.upstream.close();
  });
  return { ...started, env } as Emulators<S>;
}
