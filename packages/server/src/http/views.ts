import type { SessionRequest, SessionState } from '../domain/agentSessions.ts';
import { apiKeyState } from '../domain/apiKeys.ts';
import type { GateVersionEntry } from '../domain/gateHistory.ts';
import type { GateState } from '../domain/gates.ts';
import type { LogEntryDetail, LogEntrySummary, logOverview, logSeries } from '../domain/logs.ts';
import { planOf } from '../domain/plans.ts';
import type { SpendingCounters } from '../domain/spending.ts';
import { type SubGateWithGate, visibleToolsOf } from '../domain/subGates.ts';
import type { ApiKey, User } from '../generated/prisma/client.ts';

export function userView(user: User) {
  return {
    id: user.id,
    email: user.email,
    plan: planOf(user.plan).id,
    createdAt: user.createdAt.toISOString(),
  };
}

/** An account as the admin sees it (GET /v1/admin/accounts). */
export function accountView(user: User) {
  return {
    ...userView(user),
    isAdmin: user.isAdmin,
    disabled: user.disabledAt !== null,
    disabledAt: user.disabledAt?.toISOString() ?? null,
  };
}

/** A key as the API shows it; its spending as `spending` holds it (runtime.spending), where it does. */
export function apiKeyView(key: ApiKey, spending?: SpendingCounters) {
  const state = apiKeyState(key, spending);
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    expiresAt: key.expiresAt?.toISOString() ?? null,
    previousKeyExpiresAt: state.previousKeyExpiresAt?.toISOString() ?? null,
    rateLimitRpm: key.rateLimitRpm,
    rateLimitTpm: key.rateLimitTpm,
    spendingLimit: state.spendingLimit,
    spendingLimitPeriod: state.spendingLimitPeriod,
    spendingEnforcement: state.spendingEnforcement,
    spendingCurrent: state.spendingCurrent,
    spendingResetsAt: state.spendingResetsAt?.toISOString() ?? null,
    spendingStatus: state.spendingStatus,
    allowedGates: key.allowedGates,
    allowedTaskTypes: key.allowedTaskTypes,
    metadata: state.metadata,
  };
}

/** A gate as REST answers it: the domain's state, its times as ISO strings. */
export function gateView(gate: GateState) {
  return {
    ...gate,
    spendingPeriodStart: gate.spendingPeriodStart.toISOString(),
    spendingResetsAt: gate.spendingResetsAt.toISOString(),
    createdAt: gate.createdAt.toISOString(),
    updatedAt: gate.updatedAt.toISOString(),
  };
}

/** A version of a gate as GET /v1/gates/:id/history answers it. */
export function gateVersionView(v: GateVersionEntry) {
  return { ...v, createdAt: v.createdAt.toISOString() };
}

/** A log entry as REST answers it: the spec's fields in snake_case. */
export function logEntryView(e: LogEntrySummary) {
  return {
    id: e.id,
    api_key_id: e.apiKeyId,
    api_key_name: e.apiKeyName,
    end_user: e.endUser,
    gate_id: e.gateId,
    gate_name: e.gateName,
    endpoint: e.endpoint,
    model_requested: e.modelRequested,
    model_used: e.modelUsed,
    prompt_tokens: e.promptTokens,
    completion_tokens: e.completionTokens,
    total_tokens: e.totalTokens,
    tokens_estimated: e.tokensEstimated,
    usage_note: e.usageNote,
    cost_usd: e.costUsd,
    latency_ms: e.latencyMs,
    success: e.success,
    status_code: e.statusCode,
    error_code: e.errorCode,
    error_message: e.errorMessage,
    session_id: e.sessionId,
    inferred_action: e.inferredAction,
    tool_calls: e.toolCalls,
    tool_results: e.toolResults,
    ignored_overrides: e.ignoredOverrides,
    spending_warning: e.spendingWarning,
    stream: e.stream,
    created_at: e.createdAt.toISOString(),
  };
}

export function logDetailView(e: LogEntryDetail) {
  return {
    ...logEntryView(e),
    attempts: e.attempts,
    metadata: e.metadata,
    provider_request: e.providerRequest,
    provider_response: e.providerResponse,
    client_request: e.clientRequest,
    media: e.media,
    replay_of: e.replayOf,
    replays: e.replays,
  };
}

export function logOverviewView(o: Awaited<ReturnType<typeof logOverview>>) {
  return {
    ...o,
    since: o.since.toISOString(),
    until: o.until.toISOString(),
    recentRequests: o.recentRequests.map(logEntryView),
  };
}

export function logSeriesView(s: Awaited<ReturnType<typeof logSeries>>) {
  return {
    ...s,
    since: s.since.toISOString(),
    until: s.until.toISOString(),
    points: s.points.map((p) => ({ ...p, start: p.start.toISOString() })),
  };
}

/** A sub-gate as REST answers it: its role and the attached gate in brief. */
export function subGateView(s: SubGateWithGate) {
  return {
    subGateId: s.subGateId,
    role: s.role,
    description: s.description,
    visibleTools: visibleToolsOf(s),
    gate: {
      id: s.subGate.id,
      name: s.subGate.name,
      gateType: s.subGate.gateType,
      taskType: s.subGate.taskType,
      model: s.subGate.model,
    },
    createdAt: s.createdAt.toISOString(),
  };
}

/** An agent session as REST answers it (camelCase, like gates); its status computed. */
export function sessionView(s: SessionState) {
  return {
    ...s,
    firstRequestAt: s.firstRequestAt.toISOString(),
    lastRequestAt: s.lastRequestAt.toISOString(),
    endedAt: s.endedAt?.toISOString() ?? null,
  };
}

/**
 * One request of a session: a log entry (snake_case, as /v1/logs) with the tools it hid, and what
 * went in and came out as text (its last message, the answer or the tools it called).
 */
export function sessionRequestView(e: SessionRequest) {
  return { ...logEntryView(e), hidden_tools: e.hiddenTools, input: e.input, output: e.output };
}
