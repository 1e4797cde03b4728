/** The gate merge: how a gate's settings and a client's request combine into what is sent. */

import { type AllowOverrides, type OverridableField, overrideAllowed } from '@gatehouse/rules/gate';
import type { ChatParams, ResponseFormat } from '../providers/types.ts';
import type { ChatRequest } from './request.ts';

export type GateForMerge = {
  model: string;
  systemPrompt: string | null;
  temperature: number | null;
  maxTokens: number | null;
  topP: number | null;
  allowOverrides: AllowOverrides;
  responseFormatEnabled: boolean;
  responseFormatType: string;
  responseFormatSchema: Record<string, unknown> | null;
};

export type Merged = {
  params: ChatParams;
  /** The model to try first: the gate's primary, or the client's where permitted. */
  model: string;
  /** Overrides the client sent that the gate does not permit: ignored, logged, reported. */
  ignoredOverrides: OverridableField[];
};

/** The gate's structured-output contract, if it has one; it wins over the client's. */
export function gateResponseFormat(
  gate: Pick<GateForMerge, 'responseFormatEnabled' | 'responseFormatType' | 'responseFormatSchema'>,
): ResponseFormat | undefined {
  if (!gate.responseFormatEnabled || gate.responseFormatType === 'text') return undefined;
  if (gate.responseFormatType === 'json_object') return { type: 'json_object' };
  return {
    type: 'json_schema',
    json_schema: { name: 'gate_response', schema: gate.responseFormatSchema ?? {}, strict: true },
  };
}

export function mergeRequest(gate: GateForMerge, request: ChatRequest): Merged {
  const ignored: OverridableField[] = [];
  const pick = <T>(field: OverridableField, client: T | undefined, gateValue: T | null): T | undefined => {
    if (client !== undefined) {
      if (overrideAllowed(gate.allowOverrides, field)) return client;
      ignored.push(field);
    }
    return gateValue ?? undefined;
  };
  // A client naming the gate's own model overrides nothing.
  const clientModel = request.model === gate.model ? undefined : request.model;
  const model = pick('model', clientModel, gate.model) as string;
  const temperature = pick('temperature', request.temperature, gate.temperature);
  const maxTokens = pick('maxTokens', request.maxTokens, gate.maxTokens);
  const topP = pick('topP', request.topP, gate.topP);
  const responseFormat = gateResponseFormat(gate) ?? request.responseFormat;
  const messages = gate.systemPrompt
    ? [{ role: 'system' as const, content: gate.systemPrompt }, ...request.messages]
    : request.messages;
  return {
    model,
    ignoredOverrides: ignored,
    params: {
      messages,
      ...(temperature !== undefined && { temperature }),
      ...(maxTokens !== undefined && { maxTokens }),
      ...(topP !== undefined && { topP }),
      ...(request.stop && { stop: request.stop }),
      ...(request.seed !== undefined && { seed: request.seed }),
      ...(request.tools && { tools: request.tools }),
      ...(request.toolChoice && { toolChoice: request.toolChoice }),
      ...(responseFormat && responseFormat.type !== 'text' && { responseFormat }),
      ...(request.thinking && { thinking: request.thinking }),
      ...(request.reasoningEffort && { reasoningEffort: request.reasoningEffort }),
      ...(request.betas?.length && { betas: request.betas }),
      // The body as sent, for a provider of its family: the gate's prompt goes before the client's.
      ...(request.forward && {
        forward: { ...request.forward, system: gate.systemPrompt ? [gate.systemPrompt] : [] },
      }),
    },
  };
}
