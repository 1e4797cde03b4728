import type { UseFormReturn } from 'react-hook-form';
import { Field } from '../ui/Field.tsx';

export type NewApiKey = { name: string };

/** Names a new key; the page around it issues the key and shows it once. */
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
    </form>
  );
}
