import type { StoredGate } from './gateEdit.ts';

/** The settings of the stored gate the gate page's tests start from (what its form reads). */
export const storedSettings = {
  name: 'Support bot',
  description: null,
  autoEnhanceDescription: false,
  taskType: 'CHAT',
  taskSubtype: null,
  tags: ['support'],
  model: 'mock/echo',
  routingStrategy: 'SINGLE',
  fallbackModels: [],
  systemPrompt: null,
  temperature: 0.7,
  maxTokens: null,
  topP: null,
  allowOverrides: false,
  costWeight: null,
  latencyWeight: null,
  qualityWeight: null,
  analysisMethod: null,
  maxCostPer1kTokens: null,
  maxLatencyMs: null,
  reanalysisPeriod: 'NEVER',
  autoApplyRecommendations: false,
  strictHostedTools: false,
  responseFormatEnabled: false,
  responseFormatType: 'TEXT',
  responseFormatSchema: null,
  spendingLimit: null,
  spendingLimitPeriod: 'MONTHLY',
  spendingEnforcement: 'ALERT_ONLY',
  endUserSpendingLimit: null,
  endUserSpendingLimitPeriod: 'MONTHLY',
  spendingAlertWebhook: null,
  rateLimitRpm: null,
  rateLimitTpm: null,
  gateType: 'STANDARD',
  agentMode: null,
  orchestration: null,
  sessionSpendingLimit: null,
  sessionIdleMinutes: 30,
  maxRequestsPerSession: null,
  visibleTools: null,
} satisfies StoredGate;

/**
 * That gate as the API answers it (its settings, id, spending and dates), for the page's tests;
 * each test overrides what it is about.
 */
export function storedGate(overrides: Record<string, unknown> = {}) {
  return {
    __typename: 'Gate',
    id: '8d0b7a52-3f4e-4c1a-9f0e-2b6c1d5e7a90',
    ...storedSettings,
    spendingCurrent: 0,
    spendingPeriodStart: '2026-11-01T00:00:00.000Z',
    spendingResetsAt: '2026-12-01T00:00:00.000Z',
    spendingStatus: 'ACTIVE',
    requestWorstCaseUsd: null,
    createdAt: '2026-11-02T10:00:00.000Z',
    updatedAt: '2026-11-02T10:00:00.000Z',
    ...overrides,
  };
}
