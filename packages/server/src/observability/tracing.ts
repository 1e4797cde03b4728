/**
 * Traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set: the SDK is loaded then (tracingSdk.ts) and
 * never otherwise; while tracing is off every helper here just runs what it is given.
 *
 * A request is one span (http/tracing.ts, a child of the client's `traceparent`), with the gate's
 * resolution, each reservation, each attempt and, inside an attempt, the provider call as
 * children. Attributes follow the OpenTelemetry GenAI semantic conventions (`gen_ai.*`); the
 * gateway's own are `gatehouse.*`. No prompt or answer text is put on a span.
 */
import type { Attributes, Span, Tracer } from '@opentelemetry/api';

type Otel = { api: typeof import('@opentelemetry/api'); tracer: Tracer };
let otel: Otel | null = null;

/** Loads the SDK and starts exporting; `shutdown` sends the spans still held. */
export async function startTracing(protocol: 'http/json' | 'http/protobuf') {
  const { startSdk } = await import('./tracingSdk.ts');
  const sdk = await startSdk(protocol);
  otel = { api: sdk.api, tracer: sdk.tracer };
  return {
    shutdown: async () => {
      await sdk.shutdown();
      otel = null;
    },
  };
}

/** The API and tracer while tracing is on; null otherwise. */
export const tracingOn = (): Otel | null => otel;

/** Marks a span failed with the error's kind (the class, or a provider error's kind). */
export function spanFailed(span: Span, error: unknown): void {
  if (!otel) return;
  const e = error as { kind?: unknown; code?: unknown; name?: unknown; message?: unknown };
  const type = typeof e?.kind === 'string' ? e.kind : typeof e?.code === 'string' ? e.code : String(e?.name);
  span.setAttribute('error.type', type);
  span.setStatus({ code: otel.api.SpanStatusCode.ERROR, message: String(e?.message ?? error) });
}

/**
 * Runs `fn` in a span, a child of the active one (the provider call is a CLIENT span, the rest
 * INTERNAL); without tracing, runs `fn` alone. A thrown error marks the span failed.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span | null) => Promise<T>,
  kind: 'client' | 'internal' = 'internal',
): Promise<T> {
  if (!otel) return fn(null);
  const spanKind = kind === 'client' ? otel.api.SpanKind.CLIENT : otel.api.SpanKind.INTERNAL;
  return otel.tracer.startActiveSpan(name, { attributes, kind: spanKind }, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      spanFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** inSpan for a step that may answer at once (a cached gate): untouched while tracing is off. */
export function traced<T>(name: string, attributes: Attributes, fn: () => T | Promise<T>): T | Promise<T> {
  if (!otel) return fn();
  return inSpan(name, attributes, async () => fn());
}

/** Sets attributes on the active span (the request's, outside any child span). */
export function setActiveAttributes(attributes: Attributes): void {
  otel?.api.trace.getActiveSpan()?.setAttributes(attributes);
}

// The GenAI conventions' names of providers (gen_ai.provider.name); others keep our id.
const GEN_AI_PROVIDERS: Record<string, string> = {
  openai: 'openai',
  anthropic: 'anthropic',
  gemini: 'gcp.gemini',
  mistral: 'mistral_ai',
  groq: 'groq',
  deepseek: 'deepseek',
  xai: 'x_ai',
};
export const genAiProvider = (provider: string) => GEN_AI_PROVIDERS[provider] ?? provider;

// gen_ai.operation.name of each task type.
const GEN_AI_OPERATIONS: Record<string, string> = { chat: 'chat', embeddings: 'embeddings' };
export const genAiOperation = (taskType: string) => GEN_AI_OPERATIONS[taskType] ?? 'generate_content';

/** What an answer tells a span, where it has it (a chat completion has all of these). */
export function answerAttributes(answer: unknown): Attributes {
  const a = answer as {
    usage?: { promptTokens?: unknown; completionTokens?: unknown } | null;
    finishReason?: unknown;
  } | null;
  const attributes: Attributes = {};
  if (typeof a?.usage?.promptTokens === 'number')
    attributes['gen_ai.usage.input_tokens'] = a.usage.promptTokens;
  if (typeof a?.usage?.completionTokens === 'number')
    attributes['gen_ai.usage.output_tokens'] = a.usage.completionTokens;
  if (typeof a?.finishReason === 'string') attributes['gen_ai.response.finish_reasons'] = [a.finishReason];
  return attributes;
}

/** The span of finding the gate a request names (the cache, or the database). */
export const GATE_RESOLUTION = 'gatehouse.gate.resolve';
