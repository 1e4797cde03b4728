import type { UseFormReturn } from 'react-hook-form';
import { Field } from '../ui/Field.tsx';

export type Credentials = { email: string; password: string };

/** Email and password; the page around it decides whether they sign in or sign up. */
export function CredentialsForm({
  form,
  onSubmit,
  submitLabel,
  newPassword = false,
}: {
  form: UseFormReturn<Credentials>;
  onSubmit: (values: Credentials) => Promise<void>;
  submitLabel: string;
  newPassword?: boolean;
}) {
  const { register, handleSubmit, formState } = form;
  const { errors, isSubmitting } = formState;
  return (
    <form className="form" onSubmit={handleSubmit(onSubmit)} noValidate>
      {errors.root?.server && (
        <div className="banner error" role="alert">
          {errors.root.server.message}
        </div>
      )}
      <Field label="Email" htmlFor="email" error={errors.email}>
        <input
          id="email"
          type="email"
          autoComplete="email"
          aria-invalid={errors.email ? true : undefined}
          {...register('email', { required: 'Enter your email address' })}
        />
      </Field>
      <Field
        label="Password"
        htmlFor="password"
        error={errors.password}
        hint={newPassword ? 'At least 8 characters.' : undefined}
      >
        <input
          id="password"
          type="password"
          autoComplete={newPassword ? 'new-password' : 'current-password'}
          aria-invalid={errors.password ? true : undefined}
          {...register('password', { required: 'Enter your password' })}
        />
      </Field>
      <button type="submit" className="button primary wide" disabled={isSubmitting}>
        {isSubmitting ? 'Please wait…' : submitLabel}
      </button>
    </form>
  );
}
