import { describe, expect, it } from 'vitest';
import { changeWho } from './history.ts';

const version = (fields: Partial<Parameters<typeof changeWho>[0]>) => ({
  version: 2,
  changedBy: 'USER',
  actorEmail: 'owner@example.test',
  rolledBackToVersion: null,
  changes: [{ field: 'temperature' }],
  ...fields,
});

describe('who a version is shown as made by', () => {
  it('names nobody for the settings a gate had before its history was kept', () => {
    expect(changeWho(version({ version: 1, actorEmail: null, changes: [] }))).toBe(
      'as the gate was before its history was kept',
    );
  });

  it('names the owner, the Architect, a rollback, or an account deleted since', () => {
    expect(changeWho(version({ version: 1 }))).toBe('by you');
    expect(changeWho(version({}))).toBe('by you');
    expect(changeWho(version({ changedBy: 'ARCHITECT', actorEmail: null }))).toBe('by the Architect');
    expect(changeWho(version({ changedBy: 'ROLLBACK', rolledBackToVersion: 1 }))).toBe(
      'rollback to v1 by you',
    );
    expect(changeWho(version({ actorEmail: null }))).toBe('by an account deleted since');
  });
});
