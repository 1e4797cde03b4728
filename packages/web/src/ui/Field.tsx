import type { ReactNode } from 'react';
import type { FieldError } from 'react-hook-form';

/** A labelled control with its hint and its error; `htmlFor` ties the label and the message to it. */
export function Field({
  label,
  htmlFor,
  error,
  hint,
  children,
}: {
  label: string;
  htmlFor: string;
  error?: Pick<FieldError, 'message'> | undefined;
  hint?: ReactNode;
  children: ReactNode;
}) {
  return (
    <div className={error ? 'field invalid' : 'field'}>
      <label htmlFor={htmlFor} id={`${htmlFor}-label`}>
        {label}
      </label>
      {children}
      {hint && !error && <p className="hint">{hint}</p>}
      {error?.message && (
        <p className="field-error" id={`${htmlFor}-error`} role="alert">
          {error.message}
        </p>
      )}
    </div>
  );
}
