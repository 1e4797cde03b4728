import { describe, expect, it } from 'vitest';
import { checkGateForm, emptyGateForm, fieldOfIssue, type GateFormValues } from './gateForm.ts';

const filled = (values: Partial<GateFormValues>): GateFormValues => ({
  ...emptyGateForm,
  name: 'Support bot',
  model: 'mock/echo',
  ...values,
});

describe('the create-gate form', () => {
  it('sends only what was filled in, with numbers as numbers', () => {
    const check = checkGateForm(filled({ temperature: '0.7', tags: ' support, , prod ' }));
    expect(check).toEqual({
      ok: true,
      value: {
        name: 'Support bot',
        taskType: 'chat',
        model: 'mock/echo',
        routingStrategy: 'single',
        fallbackModels: [],
        tags: ['support', 'prod'],
        temperature: 0.7,
        spendingLimitPeriod: 'monthly',
        spendingEnforcement: 'alert_only',
      },
    });
  });

  it('refuses a temperature above 2 by the shared rules, on the temperature field', () => {
    const check = checkGateForm(filled({ temperature: '3' }));
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.issues.map((issue) => fieldOfIssue(issue)?.field)).toEqual(['temperature']);
  });

  it('asks for a model rather than reporting an empty string', () => {
    const check = checkGateForm(filled({ model: '' }));
    expect(check).toEqual({ ok: false, issues: [{ path: 'model', message: 'choose a model' }] });
  });

  it('refuses a fallback that repeats the primary model, on that fallback', () => {
    const check = checkGateForm(
      filled({
        routingStrategy: 'fallback',
        fallbackModels: [{ model: 'mock/fast' }, { model: 'mock/echo' }],
      }),
    );
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.issues.map((issue) => fieldOfIssue(issue))).toEqual([
      { field: 'fallbackModels.1.model', message: 'Is the primary model already' },
    ]);
  });

  it('places server issues on the field they name, and leaves unknown paths for the top', () => {
    expect(fieldOfIssue({ path: 'name', message: 'must not be empty' })).toEqual({
      field: 'name',
      message: 'Must not be empty',
    });
    expect(fieldOfIssue({ path: 'tags.1', message: 'is listed twice' })).toEqual({
      field: 'tags',
      message: 'Tag 2: is listed twice',
    });
    expect(fieldOfIssue({ path: 'allowOverrides.model', message: 'expected boolean' })).toEqual({
      field: 'overrideMode',
      message: 'model: expected boolean',
    });
    expect(
      fieldOfIssue({ path: 'responseFormatSchema', message: 'must not use "__proto__" as a key' }),
    ).toEqual({
      field: 'responseFormatSchema',
      message: 'Must not use "__proto__" as a key',
    });
    expect(fieldOfIssue({ path: 'userId', message: 'is read-only and cannot be set' })).toBeNull();
    expect(fieldOfIssue({ path: '', message: 'body must be a JSON object' })).toBeNull();
  });

  it('sends an agent gate’s settings, orchestration only when orchestrated and tools as a list', () => {
    const check = checkGateForm(
      filled({
        gateType: 'agent',
        agentMode: 'observability',
        orchestration: 'dynamic',
        sessionSpendingLimit: '2.5',
        sessionIdleMinutes: '15',
        visibleTools: 'search, , read_file',
      }),
    );
    expect(check.ok && check.value).toMatchObject({
      gateType: 'agent',
      agentMode: 'observability',
      sessionSpendingLimit: 2.5,
      sessionIdleMinutes: 15,
      visibleTools: ['search', 'read_file'],
    });
    expect(check.ok && 'orchestration' in check.value).toBe(false);
    const orchestrated = checkGateForm(filled({ gateType: 'agent', agentMode: 'orchestrated' }));
    expect(orchestrated.ok && orchestrated.value.orchestration).toBe('static');
  });

  it('sends an end-user spending limit with its period, and refuses 0 on its field', () => {
    const check = checkGateForm(filled({ endUserSpendingLimit: '1.5', endUserSpendingLimitPeriod: 'daily' }));
    expect(check.ok && check.value).toMatchObject({
      endUserSpendingLimit: 1.5,
      endUserSpendingLimitPeriod: 'daily',
    });
    const zero = checkGateForm(filled({ endUserSpendingLimit: '0' }));
    expect(zero.ok).toBe(false);
    expect(zero.ok ? [] : zero.issues.map((issue) => fieldOfIssue(issue)?.field)).toEqual([
      'endUserSpendingLimit',
    ]);
  });

  it('never sends the agent fields of a standard gate, whatever the hidden inputs hold', () => {
    const check = checkGateForm(filled({ sessionIdleMinutes: '', visibleTools: 'search' }));
    expect(check.ok && Object.keys(check.value)).not.toContain('visibleTools');
    expect(check.ok && Object.keys(check.value)).not.toContain('gateType');
  });

  it('refuses a tool listed twice and an idle time past a week, on their fields', () => {
    const check = checkGateForm(
      filled({ gateType: 'agent', visibleTools: 'search, search', sessionIdleMinutes: '20000' }),
    );
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.issues.map((issue) => fieldOfIssue(issue))).toEqual([
      { field: 'sessionIdleMinutes', message: 'Must be at most 10080 (a week)' },
      { field: 'visibleTools', message: 'Tool 2: is listed twice' },
    ]);
  });
});
