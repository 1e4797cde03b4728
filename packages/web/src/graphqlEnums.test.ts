import { ROUTING_STRATEGIES, TASK_TYPES } from '@gatehouse/rules/gate';
import { describe, expect, it } from 'vitest';
import { fromEnum, gateFromGraphQL, gateToGraphQL, toEnum } from './graphqlEnums.ts';

describe('GraphQL enum values and wire values', () => {
  it('spells a wire value in upper case with "-" as "_", and back', () => {
    expect(toEnum('round-robin')).toBe('ROUND_ROBIN');
    expect(toEnum('alert_only')).toBe('ALERT_ONLY');
    expect(fromEnum(ROUTING_STRATEGIES, 'ROUND_ROBIN')).toBe('round-robin');
    for (const taskType of TASK_TYPES) expect(fromEnum(TASK_TYPES, toEnum(taskType))).toBe(taskType);
  });

  it('refuses an enum value the rules do not know', () => {
    expect(() => fromEnum(TASK_TYPES, 'TEXT' as never)).toThrow('TEXT is none of chat');
  });

  it('respells only a gate’s choice fields, keeping null and leaving out what is absent', () => {
    const input = gateToGraphQL({ routingStrategy: 'round-robin', taskSubtype: null, name: 'chat' });
    expect(input).toEqual({ routingStrategy: 'ROUND_ROBIN', taskSubtype: null, name: 'chat' });
    expect(gateFromGraphQL(input)).toEqual({
      routingStrategy: 'round-robin',
      taskSubtype: null,
      name: 'chat',
    });
  });
});
