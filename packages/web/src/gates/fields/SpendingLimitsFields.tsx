/**
 * The Spending Limits tab: how much the gate may spend per period, and what happens at the limit;
 * what any one end user may spend through it; and how many requests and tokens it takes per minute.
 */
import { LIMITS, SPENDING_ENFORCEMENTS, SPENDING_PERIODS } from '@gatehouse/rules/gate';
import { RATE_LIMITS } from '@gatehouse/rules/rateLimits';
import type { ReactNode } from 'react';
import { formatCount, formatUsd } from '../../logs/format.ts';
import { Field } from '../../ui/Field.tsx';
import type { GateFormValues } from '../gateForm.ts';
import { type GateFormApi, invalid, NumberField } from './controls.tsx';

const periodLabels: Record<GateFormValues['spendingLimitPeriod'], string> = {
  monthly: 'Per month (UTC)',
  daily: 'Per day (UTC)',
};
const enforcementLabels: Record<GateFormValues['spendingEnforcement'], string> = {
  alert_only: 'Alert only',
  block: 'Block (HTTP 402)',
};

/**
 * One request's least worst case beside the limit (for the form's models, system prompt and
 * output cap as they stand), and a warning when a block limit is below it: every request is refused.
 */
export function WorstCaseNotice({ form, worstCaseUsd }: { form: GateFormApi; worstCaseUsd: number }) {
  const [limitText, enforcement] = form.watch(['spendingLimit', 'spendingEnforcement']);
  const limit = limitText.trim() === '' ? null : Number(limitText);
  const refusesAll =
    enforcement === 'block' && limit !== null && Number.isFinite(limit) && limit < worstCaseUsd;
  return (
    <div className="worst-case">
      <p className="hint" id="worst-case">
        One request can cost up to <strong>{formatUsd(worstCaseUsd)}</strong>: the dearest of these models,
        for the system prompt, Max tokens and the JSON schema the answer must follow, if any (a longer prompt
        costs more). A block limit reserves it before each call.
      </p>
      {refusesAll && (
        <p className="banner warning" role="alert">
          This limit ({formatUsd(limit)}) is below one request's worst case ({formatUsd(worstCaseUsd)}): every
          request will be refused with HTTP 402. Raise the limit, lower Max tokens, or choose alert only.
        </p>
      )}
    </div>
  );
}

/**
 * The limit, its period and its enforcement, where alerts go, then the rate limits; the gate
 * page puts the spending so far below them. `worstCaseUsd`: one request's, for the form's settings, where known.
 */
export function SpendingFields({
  form,
  children,
  worstCaseUsd = null,
}: {
  form: GateFormApi;
  children?: ReactNode;
  worstCaseUsd?: number | null;
}) {
  const { register, formState } = form;
  const { errors } = formState;
  return (
    <>
      <div className="row three">
        <NumberField
          form={form}
          name="spendingLimit"
          label="Limit (USD)"
          hint={`Per period, 0 to ${formatCount(LIMITS.spendingLimit)}. Blank: no limit.`}
          min={0}
        />
        <Field
          label="Period"
          htmlFor="spendingLimitPeriod"
          error={errors.spendingLimitPeriod}
          hint="When spending starts again from zero."
        >
          <select id="spendingLimitPeriod" {...register('spendingLimitPeriod')}>
            {SPENDING_PERIODS.map((period) => (
              <option key={period} value={period}>
                {periodLabels[period]}
              </option>
            ))}
          </select>
        </Field>
        <Field
          label="Enforcement"
          htmlFor="spendingEnforcement"
          error={errors.spendingEnforcement}
          hint="At the limit: alert only warns and lets requests through; block refuses them."
        >
          <select id="spendingEnforcement" {...register('spendingEnforcement')}>
            {SPENDING_ENFORCEMENTS.map((enforcement) => (
              <option key={enforcement} value={enforcement}>
                {enforcementLabels[enforcement]}
              </option>
            ))}
          </select>
        </Field>
      </div>
      {worstCaseUsd !== null && <WorstCaseNotice form={form} worstCaseUsd={worstCaseUsd} />}
      <Field
        label="Alert webhook"
        htmlFor="spendingAlertWebhook"
        error={errors.spendingAlertWebhook}
        hint="When an alert-only limit is crossed, a signed POST goes here, once per period. Blank: the default webhook in Settings, if any."
      >
        <input
          id="spendingAlertWebhook"
          type="url"
          inputMode="url"
          placeholder="https://example.com/hooks/spending"
          {...invalid('spendingAlertWebhook', errors.spendingAlertWebhook)}
          {...register('spendingAlertWebhook')}
        />
      </Field>
      <div className="row">
        <NumberField
          form={form}
          name="endUserSpendingLimit"
          label="Limit per end user (USD)"
          hint="What any one end user (x-gatehouse-user, OpenAI's user, Anthropic's metadata.user_id) may spend per period. More than 0; blank: no limit."
          min={0}
        />
        <Field
          label="End-user period"
          htmlFor="endUserSpendingLimitPeriod"
          error={errors.endUserSpendingLimitPeriod}
          hint="When each end user's spending starts again from zero."
        >
          <select id="endUserSpendingLimitPeriod" {...register('endUserSpendingLimitPeriod')}>
            {SPENDING_PERIODS.map((period) => (
              <option key={period} value={period}>
                {periodLabels[period]}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <div className="row">
        <NumberField
          form={form}
          name="rateLimitRpm"
          label="Requests per minute"
          hint={`Over any 60 seconds, 1 to ${formatCount(RATE_LIMITS.rateLimitRpm)}; more get HTTP 429. Blank: no limit.`}
          step="1"
          min={1}
        />
        <NumberField
          form={form}
          name="rateLimitTpm"
          label="Tokens per minute"
          hint={`Prompt and completion tokens over any 60 seconds, 1 to ${formatCount(RATE_LIMITS.rateLimitTpm)}. Blank: no limit.`}
          step="1"
          min={1}
        />
      </div>
      {children}
    </>
  );
}
