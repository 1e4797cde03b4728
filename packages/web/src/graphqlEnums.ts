/**
 * GraphQL spells a choice as an enum value (ROUND_ROBIN), the rules, REST and the forms as its wire
 * value (round-robin). The server names each enum value after the rules' tuple member, in upper
 * case with `-` as `_`; this is the same mapping, one way and back, so the form never sees an enum
 * value and the API never gets a wire value.
 */

import { type EnumValue, enumValueOf } from '@gatehouse/rules/enumValues';
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
  TASK_SUBTYPES,
  TASK_TYPES,
} from '@gatehouse/rules/gate';

/** The enum value GraphQL uses for a wire value: `round-robin` is `ROUND_ROBIN`. */
export const toEnum = enumValueOf;

/** The tuple member an enum value stands for; a value of none is the schema and the rules disagreeing. */
export function fromEnum<const T extends readonly string[]>(
  choices: T,
  value: EnumValue<T[number]>,
): T[number] {
  const wire = choices.find((choice) => toEnum(choice) === value);
  if (wire === undefined) throw new Error(`${value} is none of ${choices.join(', ')}`);
  return wire;
}

/** A gate's choice fields and the tuples they choose from. */
const GATE_CHOICES = {
  taskType: TASK_TYPES,
  taskSubtype: TASK_SUBTYPES,
  routingStrategy: ROUTING_STRATEGIES,
  analysisMethod: ANALYSIS_METHODS,
  reanalysisPeriod: REANALYSIS_PERIODS,
  responseFormatType: RESPONSE_FORMAT_TYPES,
  spendingLimitPeriod: SPENDING_PERIODS,
  endUserSpendingLimitPeriod: SPENDING_PERIODS,
  spendingEnforcement: SPENDING_ENFORCEMENTS,
  gateType: GATE_TYPES,
  agentMode: AGENT_MODES,
  orchestration: ORCHESTRATIONS,
} as const;

type ChoiceField = keyof typeof GATE_CHOICES;
type Wire<F extends ChoiceField> = (typeof GATE_CHOICES)[F][number];
/** The same object with each choice field spelled `To`, keeping its null or absence. */
type Respelled<G, To extends 'wire' | 'enum'> = {
  [K in keyof G]: K extends ChoiceField
    ? (To extends 'wire' ? Wire<K> : EnumValue<Wire<K>>) | Extract<G[K], null | undefined>
    : G[K];
};

function respell<G extends object>(gate: G, spell: (field: ChoiceField, value: string) => string) {
  const respelled: Record<string, unknown> = Object.fromEntries(Object.entries(gate));
  for (const field of Object.keys(GATE_CHOICES) as ChoiceField[]) {
    const value = respelled[field];
    if (typeof value === 'string') respelled[field] = spell(field, value);
  }
  return respelled;
}

/** A gate (or part of one) read from GraphQL, with its choices as the rules and the form spell them. */
export function gateFromGraphQL<G extends Partial<Record<ChoiceField, string | null>>>(
  gate: G,
): Respelled<G, 'wire'> {
  return respell(gate, (field, value) =>
    fromEnum(GATE_CHOICES[field], value as EnumValue<Wire<typeof field>>),
  ) as Respelled<G, 'wire'>;
}

/** Gate settings checked by the rules, with their choices as GraphQL's GateInput takes them. */
export function gateToGraphQL<G extends Partial<Record<ChoiceField, string | null>>>(
  gate: G,
): Respelled<G, 'enum'> {
  return respell(gate, (_field, value) => toEnum(value)) as Respelled<G, 'enum'>;
}
