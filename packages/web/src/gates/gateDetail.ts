import { graphql, type ResultOf } from '../graphql.ts';

/** A gate as the gate page shows and edits it: every setting and its spending now. */
export const GateDetail = graphql(`
  fragment GateDetail on Gate {
    id
    name
    description
    autoEnhanceDescription
    taskType
    taskSubtype
    tags
    model
    routingStrategy
    fallbackModels
    systemPrompt
    temperature
    maxTokens
    topP
    allowOverrides
    strictHostedTools
    costWeight
    latencyWeight
    qualityWeight
    analysisMethod
    maxCostPer1kTokens
    maxLatencyMs
    reanalysisPeriod
    autoApplyRecommendations
    responseFormatEnabled
    responseFormatType
    responseFormatSchema
    spendingLimit
    spendingLimitPeriod
    spendingEnforcement
    spendingAlertWebhook
    requestWorstCaseUsd
    endUserSpendingLimit
    endUserSpendingLimitPeriod
    spendingCurrent
    spendingPeriodStart
    spendingResetsAt
    spendingStatus
    rateLimitRpm
    rateLimitTpm
    gateType
    agentMode
    orchestration
    sessionSpendingLimit
    sessionIdleMinutes
    maxRequestsPerSession
    visibleTools
    createdAt
    updatedAt
  }
`);

export type GateDetailData = ResultOf<typeof GateDetail>;
