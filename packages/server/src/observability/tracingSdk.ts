/**
 * The OpenTelemetry SDK, loaded only when OTEL_EXPORTER_OTLP_ENDPOINT is set (tracing.ts imports
 * this module on demand): a tracer provider that batches spans to the OTLP/HTTP exporter, with
 * the W3C trace-context propagator and async-local context registered globally. The exporter
 * reads the standard OTEL_EXPORTER_OTLP_* variables itself (endpoint + /v1/traces, headers,
 * timeout), the batch processor OTEL_BSP_*, the sampler OTEL_TRACES_SAMPLER.
 */
import * as api from '@opentelemetry/api';
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

export async function startSdk(protocol: 'http/json' | 'http/protobuf') {
  const { OTLPTraceExporter } =
    protocol === 'http/protobuf'
      ? await import('@opentelemetry/exporter-trace-otlp-proto')
      : await import('@opentelemetry/exporter-trace-otlp-http');
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': 'gatehouse' }))
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the name above.
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  return { api, tracer: api.trace.getTracer('gatehouse'), shutdown: () => provider.shutdown() };
}
