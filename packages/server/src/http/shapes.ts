/**
 * What the control plane's routes answer, for /openapi.json: the views of views.ts as schemas,
 * built on the rules' own field schemas where the answer repeats what was set. The openapi test
 * checks real answers against them, so a view that changes without its schema fails there.
 */
import { apiKeyFieldSchemas } from '@gatehouse/rules/account';
import { SESSION_STATUSES } from '@gatehouse/rules/agent';
import { gateFieldSchemas, SPENDING_STATUSES } from '@gatehouse/rules/gate';
import { z } from 'zod';

const time = z.iso.datetime();
const uuid = z.uuid();

export const paginationShape = z.object({
  limit: z.number().int(),
  nextCursor: z.string().nullable(),
  hasMore: z.boolean(),
});

/** A gate: every setting, and what the gateway keeps of it (spending, times). */
export const gateShape = z
  .object({
    id: uuid,
    userId: uuid,
    ...gateFieldSchemas,
    taskAnalysis: z.unknown().describe("The Architect's last analysis of the gate, or null"),
    spendingCurrent: z.number(),
    spendingPeriodStart: time,
    spendingResetsAt: time,
    spendingStatus: z.enum(SPENDING_STATUSES),
    requestWorstCaseUsd: z
      .number()
      .nullable()
      .describe(
        "One request's least worst case (USD): the gate's system prompt and output cap on its dearest model, what a block limit must cover for any request to pass; null for task types priced by their input",
      ),
    createdAt: time,
    updatedAt: time,
  })
  .meta({ id: 'Gate' });

export const apiKeyShape = z
  .object({
    id: uuid,
    name: z.string(),
    prefix: z.string(),
    createdAt: time,
    lastUsedAt: time.nullable(),
    revokedAt: time.nullable(),
    expiresAt: time.nullable().describe('When the key stops working (401 key_expired); null: never'),
    previousKeyExpiresAt: time
      .nullable()
      .describe('Until when the secret replaced by the last roll still works; null: it does not'),
    rateLimitRpm: z.number().int().nullable(),
    rateLimitTpm: z.number().int().nullable(),
    spendingLimit: apiKeyFieldSchemas.spendingLimit,
    spendingLimitPeriod: apiKeyFieldSchemas.spendingLimitPeriod,
    spendingEnforcement: apiKeyFieldSchemas.spendingEnforcement,
    spendingCurrent: z.number().describe("What the key has spent this period (its life, for 'total')"),
    spendingResetsAt: time.nullable().describe("When spendingCurrent starts again at zero; null for 'total'"),
    spendingStatus: z.enum(SPENDING_STATUSES),
    allowedGates: z.array(uuid).describe("The account's gates the key may use; empty: all"),
    allowedTaskTypes: apiKeyFieldSchemas.allowedTaskTypes.describe(
      'The task types the key may use; empty: all',
    ),
    metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  })
  .meta({ id: 'ApiKey' });

/** A new key: its secret, shown this once. */
export const issuedApiKeyShape = apiKeyShape.extend({ key: z.string() });

export const userShape = z.object({ id: uuid, email: z.string(), plan: z.string(), createdAt: time });

export const accountShape = userShape
  .extend({ isAdmin: z.boolean(), disabled: z.boolean(), disabledAt: time.nullable() })
  .meta({ id: 'Account' });

/** A log entry in the listing: the spec's fields, in snake_case. */
export const logEntryShape = z
  .looseObject({
    id: uuid,
    api_key_id: uuid.nullable().describe('The API key the request came with; null from the dashboard'),
    api_key_name: z.string().nullable().describe("The key's name when the request was made"),
    end_user: z
      .string()
      .nullable()
      .describe("The end user the request named (x-gatehouse-user, `user`, Anthropic's `metadata.user_id`)"),
    gate_id: uuid.nullable(),
    gate_name: z.string().nullable(),
    endpoint: z.string(),
    model_requested: z.string().nullable(),
    model_used: z.string().nullable(),
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    total_tokens: z.number().int(),
    tokens_estimated: z.boolean(),
    cost_usd: z.number(),
    latency_ms: z.number(),
    success: z.boolean(),
    status_code: z.number().int(),
    error_code: z.string().nullable(),
    error_message: z.string().nullable(),
    session_id: z.string().nullable(),
    stream: z.boolean(),
    created_at: time,
  })
  .meta({ id: 'LogEntry' });

/** One entry in full: the attempts, and the request and response JSON as sent and received. */
export const logDetailShape = logEntryShape.extend({
  attempts: z.array(z.unknown()),
  metadata: z.unknown(),
  provider_request: z.unknown(),
  provider_response: z.unknown(),
  client_request: z.unknown(),
  media: z.unknown(),
  replay_of: uuid.nullable().describe('The entry this request replayed (sent with x-gatehouse-replay-of)'),
  replays: z.array(uuid).describe('The entries that replayed this one, oldest first'),
});

/** An agent gate's session (camelCase, like gates). */
export const sessionShape = z
  .object({
    id: uuid,
    key: z.string().describe('The id the client sent in x-gatehouse-session-id'),
    gateId: uuid,
    status: z.enum(SESSION_STATUSES),
    requestCount: z.number().int().describe('Requests that reached a provider'),
    refusedCount: z.number().int().describe('Requests refused before any provider call'),
    spendingCurrent: z.number(),
    sessionSpendingLimit: z.number().nullable(),
    promptTokens: z.number().int(),
    completionTokens: z.number().int(),
    topic: z.string().nullable(),
    toolsCalled: z.array(z.string()),
    subGatesUsed: z.array(z.string()),
    firstRequestAt: time,
    lastRequestAt: time,
    endedAt: time.nullable(),
  })
  .meta({ id: 'AgentSession' });

export const subGateShape = z
  .object({
    subGateId: uuid,
    role: z.string(),
    description: z.string().nullable(),
    visibleTools: z.unknown(),
    gate: z.object({
      id: uuid,
      name: z.string(),
      gateType: z.string(),
      taskType: z.string(),
      model: z.string(),
    }),
    createdAt: time,
  })
  .meta({ id: 'SubGate' });
