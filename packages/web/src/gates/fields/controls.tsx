/**
 * The gate's settings, field by field, with their ranges and help texts written once: the create
 * form shows the essentials in fieldsets, the gate page every setting in the spec's tabs (Basic
 * Info, Models & Routing, Request Config, Spending Limits), one file a tab. Both hold the same form
 * values. This file holds the controls the tabs share.
 */
import type { ReactNode } from 'react';
import type { UseFormReturn } from 'react-hook-form';
import { Field } from '../../ui/Field.tsx';
import type { GateFormValues } from '../gateForm.ts';

/** The form, whatever its submit produces (a new gate's input, or a patch). */
// biome-ignore lint/suspicious/noExplicitAny: the sections never submit, so the submitted type is irrelevant here
export type GateFormApi = UseFormReturn<GateFormValues, unknown, any>;

/** Marks a control invalid for assistive technology and points it at its message. */
export function invalid(id: string, error: { message?: string } | undefined) {
  return error ? { 'aria-invalid': true, 'aria-describedby': `${id}-error` } : {};
}

/** A checkbox with its label beside it, and its hint below. */
export function Toggle({
  id,
  label,
  hint,
  children,
}: {
  id: string;
  label: string;
  hint?: ReactNode;
  children: ReactNode;
}) {
  return (
    <div className="field toggle">
      <div className="toggle-row">
        {children}
        <label htmlFor={id} className="toggle-label">
          {label}
        </label>
      </div>
      {hint && <p className="hint">{hint}</p>}
    </div>
  );
}

/**
 * A number setting: its label, hint and error around a number typed as text, so a blank stays
 * blank (the gate's default) rather than becoming 0.
 */
export function NumberField({
  form,
  name,
  label,
  hint,
  step = 'any',
  min,
  max,
}: {
  form: GateFormApi;
  name: keyof Pick<
    GateFormValues,
    | 'temperature'
    | 'maxTokens'
    | 'topP'
    | 'costWeight'
    | 'latencyWeight'
    | 'qualityWeight'
    | 'maxCostPer1kTokens'
    | 'maxLatencyMs'
    | 'spendingLimit'
    | 'endUserSpendingLimit'
    | 'rateLimitRpm'
    | 'rateLimitTpm'
  >;
  label: string;
  hint: ReactNode;
  step?: string;
  min?: number;
  max?: number;
}) {
  const error = form.formState.errors[name];
  return (
    <Field label={label} htmlFor={name} error={error} hint={hint}>
      <input
        id={name}
        type="number"
        step={step}
        min={min}
        max={max}
        inputMode={step === '1' ? 'numeric' : 'decimal'}
        {...invalid(name, error)}
        {...form.register(name)}
      />
    </Field>
  );
}
