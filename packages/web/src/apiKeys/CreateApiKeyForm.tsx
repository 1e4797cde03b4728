import { RATE_LIMITS } from '@gatehouse/rules/rateLimits';
import type { FieldErrors, UseFormRegister, UseFormReturn } from 'react-hook-form';
import { formatCount } from '../logs/format.ts';
import { Field } from '../ui/Field.tsx';
import type { ApiKeyLimitsValues, NewApiKey } from './apiKeyForm.ts';

export type { NewApiKey } from './apiKeyForm.ts';

/** A key's requests and tokens per minute; `idPrefix` keeps the ids of several forms apart. */
export function LimitFields<V extends ApiKeyLimitsValues>({
  register,
  errors,
  idPrefix,
}: {
  register: UseFormRegister<V>;
  errors: FieldErrors<ApiKeyLimitsValues>;
  idPrefix: string;
}) {
  const fields = [
    {
      name: 'rateLimitRpm',
      label: 'Requests per minute',
      hint: `1 to ${formatCount(RATE_LIMITS.rateLimitRpm)}; blank: no limit.`,
    },
    {
      name: 'rateLimitTpm',
      label: 'Tokens per minute',
      hint: `1 to ${formatCount(RATE_LIMITS.rateLimitTpm)}; blank: no limit.`,
    },
  ] as const;
  return (
    <>
      {fields.map(({ name, label, hint }) => {
        const id = `${idPrefix}-${name}`;
        const error = errors[name];
        return (
          <Field key={name} label={label} htmlFor={id} error={error} hint={hint}>
            <input
              id={id}
              inputMode="numeric"
              autoComplete="off"
              aria-invalid={error ? true : undefined}
              aria-describedby={error ? `${id}-error` : undefined}
              {...register(name as Parameters<UseFormRegister<V>>[0])}
            />
          </Field>
        );
      })}
    </>
  );
}

/** Names a new key and its limits; the page around it issues the key and shows it once. */
export function CreateApiKeyForm({
  form,
  onSubmit,
}: {
  form: UseFormReturn<NewApiKey>;
  onSubmit: (values: NewApiKey) => Promise<void>;
}) {
  const { register, handleSubmit, formState } = form;
  const { errors, isSubmitting } = formState;
  return (
    <form className="inline-form" aria-label="Create an API key" onSubmit={handleSubmit(onSubmit)} noValidate>
      {errors.root?.server && (
        <div className="banner error" role="alert">
          {errors.root.server.message}
        </div>
      )}
      <Field
        label="New key name"
        htmlFor="apiKeyName"
        error={errors.name}
        hint="Up to 100 characters, e.g. the application that will use it."
      >
        <div className="copy-row">
          <input
            id="apiKeyName"
            autoComplete="off"
            aria-invalid={errors.name ? true : undefined}
            aria-describedby={errors.name ? 'apiKeyName-error' : undefined}
            {...register('name')}
          />
          <button type="submit" className="button primary" disabled={isSubmitting}>
            {isSubmitting ? 'Creating…' : 'Create key'}
          </button>
        </div>
      </Field>
      <div className="row">
        <LimitFields register={register} errors={errors} idPrefix="newKey" />
      </div>
    </form>
  );
}
