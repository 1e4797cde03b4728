/** Adapters built the way the server builds them (env → config → registry), aimed at emulators. */
import { expect } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { createProviderRegistry } from '../../../src/providers/registry.ts';
import {
  type ChatCompletion,
  type ChatParams,
  type ProviderAdapter,
  ProviderError,
  type StreamDelta,
} from '../../../src/providers/types.ts';

export function adapterFrom(provider: string, env: Record<string, string>): ProviderAdapter {
  const registry = createProviderRegistry(loadConfig({ NODE_ENV: 'test', ...env }).providers);
  const adapter = registry.adapter(provider);
  if (!adapter) throw new Error(`provider ${provider} is not configured by ${JSON.stringify(env)}`);
  return adapter;
}

export type Streamed = { completion: ChatCompletion; deltas: StreamDelta[] };

export function complete(adapter: ProviderAdapter, model: string, params: ChatParams, timeoutMs = 5_000) {
  return adapter.chat(model, params, { signal: AbortSignal.timeout(timeoutMs) });
}

export async function stream(
  adapter: ProviderAdapter,
  model: string,
  params: ChatParams,
  timeoutMs = 5_000,
): Promise<Streamed> {
  const deltas: StreamDelta[] = [];
  const completion = await adapter.chat(model, params, {
    signal: AbortSignal.timeout(timeoutMs),
    onDelta: (delta) => deltas.push(delta),
  });
  return { completion, deltas };
}

/** The ProviderError a call fails with (the test fails if it succeeds or throws anything else). */
export async function failureOf(call: Promise<unknown>): Promise<ProviderError> {
  const error = await call.then(
    (value) => {
      throw new Error(`expected a ProviderError, the call answered ${JSON.stringify(value)}`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

/** The content deltas joined, and the tool-call deltas folded into calls, as a client would. */
export function foldDeltas(deltas: StreamDelta[]) {
  let content = '';
  const calls: { id: string; name: string; arguments: string }[] = [];
  for (const d of deltas) {
    content += d.content ?? '';
    for (const t of d.toolCalls ?? []) {
      const call = calls[t.index] ?? { id: '', name: '', arguments: '' };
      calls[t.index] = call;
      if (t.id) call.id = t.id;
      if (t.name) call.name += t.name;
      call.arguments += t.arguments ?? '';
    }
  }
  return { content, calls };
}
