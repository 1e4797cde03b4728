import { KEY_SPENDING_PERIODS } from '@gatehouse/rules/account';
import { LIMITS, SPENDING_ENFORCEMENTS, TASK_TYPES } from '@gatehouse/rules/gate';
import type { UseFormReturn } from 'react-hook-form';
import { formatCount } from '../logs/format.ts';
import { Field } from '../ui/Field.tsx';
import type { KeySettingsValues } from './keySettings.ts';

const periodLabels: Record<KeySettingsValues['spendingLimitPeriod'], string> = {
  monthly: 'Per month (UTC)',
  daily: 'Per day (UTC)',
  total: "Over the key's life",
};
const enforcementLabels: Record<KeySettingsValues['spendingEnforcement'], string> = {
  block: 'Block (HTTP 402)',
  alert_only: 'Alert only',
};

const describedBy = (id: string, error: unknown) =>
  error ? { 'aria-invalid': true as const, 'aria-describedby': `${id}-error` } : {};

/**
 * A key's spending limit, the gates and task types it may use, and when it expires; the page
 * around it saves them. `gates` are the account's, to choose from.
 */
export function KeySettingsForm({
  form,
  onSubmit,
  onCancel,
  name,
  idPrefix,
  gates,
}: {
  form: UseFormReturn<KeySettingsValues>;
  onSubmit: (values: KeySettingsValues) => Promise<void>;
  onCancel: () => void;
  name: string;
  idPrefix: string;
  gates: readonly { id: string; name: string }[];
}) {
  const { register, handleSubmit, formState } = form;
  const { errors, isSubmitting } = formState;
  const id = (field: string) => `${idPrefix}-${field}`;
  return (
    <form
      className="inline-form"
      aria-label={`Settings of ${name}`}
      onSubmit={handleSubmit(onSubmit)}
      noValidate
    >
      {errors.root?.server && (
        <div className="banner error" role="alert">
          {errors.root.server.message}
        </div>
      )}
      <div className="row three">
        <Field
          label="Spending limit (USD)"
          htmlFor={id('spendingLimit')}
          error={errors.spendingLimit}
          hint={`0 to ${formatCount(LIMITS.spendingLimit)}, beside each gate's own. Blank: no limit.`}
        >
          <input
            id={id('spendingLimit')}
            inputMode="decimal"
            autoComplete="off"
            {...describedBy(id('spendingLimit'), errors.spendingLimit)}
            {...register('spendingLimit')}
          />
        </Field>
        <Field label="Period" htmlFor={id('spendingLimitPeriod')} error={errors.spendingLimitPeriod}>
          <select id={id('spendingLimitPeriod')} {...register('spendingLimitPeriod')}>
            {KEY_SPENDING_PERIODS.map((period) => (
              <option key={period} value={period}>
                {periodLabels[period]}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Enforcement" htmlFor={id('spendingEnforcement')} error={errors.spendingEnforcement}>
          <select id={id('spendingEnforcement')} {...register('spendingEnforcement')}>
            {SPENDING_ENFORCEMENTS.map((enforcement) => (
              <option key={enforcement} value={enforcement}>
                {enforcementLabels[enforcement]}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <fieldset className="choices" {...describedBy(id('allowedGates'), errors.allowedGates)}>
        <legend>Gates it may use (none ticked: all of them)</legend>
        <div className="radio-row">
          {gates.length === 0 && <span className="muted">No gates yet.</span>}
          {gates.map((gate) => (
            <label key={gate.id} className="choice">
              <input type="checkbox" className="check" value={gate.id} {...register('allowedGates')} />
              {gate.name}
            </label>
          ))}
        </div>
        {errors.allowedGates?.message && (
          <p className="field-error" id={`${id('allowedGates')}-error`} role="alert">
            {errors.allowedGates.message}
          </p>
        )}
      </fieldset>
      <fieldset className="choices" {...describedBy(id('allowedTaskTypes'), errors.allowedTaskTypes)}>
        <legend>Task types it may use (none ticked: all of them)</legend>
        <div className="radio-row">
          {TASK_TYPES.map((type) => (
            <label key={type} className="choice">
              <input type="checkbox" className="check" value={type} {...register('allowedTaskTypes')} />
              {type}
            </label>
          ))}
        </div>
        {errors.allowedTaskTypes?.message && (
          <p className="field-error" id={`${id('allowedTaskTypes')}-error`} role="alert">
            {errors.allowedTaskTypes.message}
          </p>
        )}
      </fieldset>
      <Field
        label="Expires"
        htmlFor={id('expiresAt')}
        error={errors.expiresAt}
        hint="In your time zone; its requests get HTTP 401 from then on. Blank: never."
      >
        <input
          id={id('expiresAt')}
          type="datetime-local"
          {...describedBy(id('expiresAt'), errors.expiresAt)}
          {...register('expiresAt')}
        />
      </Field>
      <div className="actions">
        <button type="button" className="button subtle" onClick={onCancel} disabled={isSubmitting}>
          Cancel
        </button>
        <button type="submit" className="button primary" disabled={isSubmitting}>
          {isSubmitting ? 'Saving…' : 'Save settings'}
        </button>
      </div>
    </form>
  );
}
