/**
 * Where a request through a gate ends, once its log entry is final: counted on /metrics, and
 * described on its trace's request span. The pipeline calls this once per entry.
 */
import type { LogEntryData } from '../dataplane/logWriter.ts';
import { type FinishedRequest, recordRequest } from './metrics.ts';
import { genAiOperation, genAiProvider, setActiveAttributes, tracingOn } from './tracing.ts';

export function requestEnded(
  entry: LogEntryData,
  how: {
    taskType: string;
    /** The request failed on an error of the gateway's own. */
    unexpected: boolean;
    /** A request the pipeline made itself within another (an agent gate's router): not the span's. */
    nested: boolean;
  },
): void {
  const outcome = recordRequest(entry as FinishedRequest, how.unexpected);
  if (!tracingOn() || how.nested) return;
  const attempts = (entry.attempts ?? []) as { model: string; provider: string }[];
  const model = entry.modelUsed ?? attempts.at(-1)?.model;
  const provider = attempts.find((a) => a.model === model)?.provider;
  setActiveAttributes({
    'gen_ai.operation.name': genAiOperation(how.taskType),
    ...(entry.modelRequested && { 'gen_ai.request.model': entry.modelRequested }),
    ...(model && { 'gen_ai.response.model': model }),
    ...(provider && { 'gen_ai.provider.name': genAiProvider(provider) }),
    ...(entry.success && {
      'gen_ai.usage.input_tokens': entry.promptTokens ?? 0,
      'gen_ai.usage.output_tokens': entry.completionTokens ?? 0,
    }),
    ...(entry.sessionId && { 'gen_ai.conversation.id': entry.sessionId }),
    'gatehouse.request.id': entry.id as string,
    'gatehouse.gate.id': entry.gateId as string,
    'gatehouse.cost_usd': Number(entry.costUsd ?? 0),
    'gatehouse.attempts': attempts.length,
    'gatehouse.outcome': outcome,
    ...(entry.errorCode && { 'error.type': entry.errorCode }),
  });
}
