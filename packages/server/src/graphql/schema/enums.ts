/**
 * The choice fields as GraphQL enums, made from the tuples that the rules validate with, so a new
 * choice reaches GraphQL without a second list. A value's name is its wire value in upper case
 * with `-` as `_` (`round-robin` is ROUND_ROBIN): GraphQL clients see the name, resolvers and the
 * rules see the wire value that REST takes.
 */

import { KEY_SPENDING_PERIODS, PLAN_IDS } from '@gatehouse/rules/account';
import { SESSION_STATUSES } from '@gatehouse/rules/agent';
import { enumValueOf } from '@gatehouse/rules/enumValues';
import {
  AGENT_MODES,
  ANALYSIS_METHODS,
  GATE_TYPES,
  ORCHESTRATIONS,
  REANALYSIS_PERIODS,
  RESPONSE_FORMAT_TYPES,
  ROUTING_STRATEGIES,
  SPENDING_ENFORCEMENTS,
  SPENDING_PERIODS,
  SPENDING_STATUSES,
  TASK_SUBTYPES,
  TASK_TYPES,
} from '@gatehouse/rules/gate';
import { FAILURE_CLASSES, LOG_STATUSES } from '@gatehouse/rules/logs';
import type { EnumRef, SchemaTypes } from '@pothos/core';
import { GATE_CHANGE_KINDS } from '../../domain/gateVersions.ts';
import { seriesQuerySchema } from '../../domain/logs.ts';
import { builder } from '../builder.ts';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T extends SchemaTypes> ? T : never;

const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

function enumName(wire: string): string {
  const name = enumValueOf(wire);
  if (!NAME.test(name)) throw new Error(`"${wire}" has no GraphQL enum name`);
  return name;
}

/**
 * An enum of the tuple's choices. Its output is any string because stored choices are plain text
 * columns: GraphQL refuses to serialize one outside the tuple, so no resolver needs to narrow it.
 */
function choiceEnum<const T extends readonly string[]>(
  name: string,
  choices: T,
): EnumRef<Types, string, T[number]> {
  const values = Object.fromEntries(choices.map((wire) => [enumName(wire), { value: wire }]));
  if (Object.keys(values).length !== choices.length) throw new Error(`${name}: two choices share a name`);
  // Pothos cannot infer the shape from a generic tuple; the values above are exactly T's members.
  const description = `In the REST API: ${choices.join(', ')}`;
  return builder.enumType(name, { description, values }) as EnumRef<Types, string, T[number]>;
}

export const TaskType = choiceEnum('TaskType', TASK_TYPES);
export const TaskSubtype = choiceEnum('TaskSubtype', TASK_SUBTYPES);
export const RoutingStrategy = choiceEnum('RoutingStrategy', ROUTING_STRATEGIES);
export const AnalysisMethod = choiceEnum('AnalysisMethod', ANALYSIS_METHODS);
export const ReanalysisPeriod = choiceEnum('ReanalysisPeriod', REANALYSIS_PERIODS);
export const ResponseFormatType = choiceEnum('ResponseFormatType', RESPONSE_FORMAT_TYPES);
export const SpendingPeriod = choiceEnum('SpendingPeriod', SPENDING_PERIODS);
export const KeySpendingPeriod = choiceEnum('KeySpendingPeriod', KEY_SPENDING_PERIODS);
export const SpendingEnforcement = choiceEnum('SpendingEnforcement', SPENDING_ENFORCEMENTS);
export const SpendingStatus = choiceEnum('SpendingStatus', SPENDING_STATUSES);
export const LogStatus = choiceEnum('LogStatus', LOG_STATUSES);
export const FailureClass = choiceEnum('FailureClass', FAILURE_CLASSES);
export const LogSeriesBucket = choiceEnum('LogSeriesBucket', seriesQuerySchema.shape.bucket.unwrap().options);
export const PlanId = choiceEnum('PlanId', PLAN_IDS);
export const GateType = choiceEnum('GateType', GATE_TYPES);
export const AgentMode = choiceEnum('AgentMode', AGENT_MODES);
export const Orchestration = choiceEnum('Orchestration', ORCHESTRATIONS);
export const SessionStatus = choiceEnum('SessionStatus', SESSION_STATUSES);
export const GateChangedBy = choiceEnum('GateChangedBy', GATE_CHANGE_KINDS);
