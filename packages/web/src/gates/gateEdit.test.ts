import { describe, expect, it } from 'vitest';
import { checkGateEdit, gateToForm, type StoredGate, tabOfField } from './gateEdit.ts';
import type { GateFormValues } from './gateForm.ts';
import { storedSettings } from './storedGate.testing.ts';

const stored: StoredGate = {
  ...storedSettings,
  routingStrategy: 'FALLBACK',
  fallbackModels: ['mock/fast'],
  allowOverrides: { temperature: true },
  costWeight: 0.5,
  responseFormatSchema: { type: 'object' },
  spendingLimit: 10,
  spendingEnforcement: 'BLOCK',
};
const initial = gateToForm(stored);
const edit = (values: Partial<GateFormValues>) => checkGateEdit({ ...initial, ...values }, initial, stored);

describe('editing a stored gate', () => {
  it('sends nothing when the values only look different ("0.70" is the stored 0.7)', () => {
    expect(edit({ temperature: '0.70', tags: ' support ' })).toEqual({ ok: true, value: {} });
  });

  it('sends each changed setting, and a cleared one as null', () => {
    expect(edit({ spendingLimit: '', description: 'Answers tickets', maxTokens: '512' })).toEqual({
      ok: true,
      value: { spendingLimit: null, description: 'Answers tickets', maxTokens: 512 },
    });
  });

  it('checks the cross-field rules on the gate as it would be stored: custom needs all three weights', () => {
    const check = edit({ analysisMethod: 'custom', latencyWeight: '0.2' });
    expect(check).toEqual({
      ok: false,
      issues: [{ path: 'qualityWeight', message: 'is required when analysisMethod is custom' }],
    });
  });

  it('refuses a JSON schema that does not parse, on its field, and one of the schema rules', () => {
    const broken = edit({ responseFormatSchema: '{"type": ' });
    expect(broken.ok).toBe(false);
    if (!broken.ok) expect(broken.issues.map((issue) => issue.path)).toEqual(['responseFormatSchema']);
    const proto = edit({ responseFormatSchema: '{"__proto__": {}}' });
    expect(proto).toEqual({
      ok: false,
      issues: [{ path: 'responseFormatSchema', message: 'must not use "__proto__" as a key' }],
    });
  });

  it('finds the tab of a field, a fallback row included', () => {
    expect(tabOfField('fallbackModels.2.model')).toBe('routing');
    expect(tabOfField('overrideFields.topP')).toBe('request');
    expect(tabOfField('spendingEnforcement')).toBe('spending');
    expect(tabOfField('root.server')).toBeNull();
  });
});
