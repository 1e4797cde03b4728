import type { FieldPath, FieldValues, UseFormSetError } from 'react-hook-form';

/** A problem the server found with one value of the input, at its dotted path ('' for the whole input). */
type Issue = { path: string; message: string };

/** Where an issue shows: on a form field with the message to show there, or (null) above the form. */
export type FieldOfIssue<V extends FieldValues> = (
  issue: Issue,
) => { field: FieldPath<V>; message: string } | null;

/**
 * A mutation's answer other than its success: one of the schema's typed errors (`Error`, with
 * `ValidationError`'s issues and `ConflictError`'s field where the document selects them).
 */
export type MutationFailure = {
  __typename: string;
  message?: string;
  issues?: readonly Issue[];
  field?: string | null;
};

/** "must not be empty" → "Must not be empty": messages shown alone under a field. */
export function sentence(message: string): string {
  return message.charAt(0).toUpperCase() + message.slice(1);
}

/**
 * Shows a mutation's failure on its form: a validation error's issues and a conflict on the fields
 * they name, the rest together above the form; any other error, or no answer at all (`unanswered`
 * says what to show then), above the form. Returns the first field that got an error, or null.
 */
export function showMutationErrors<V extends FieldValues>(
  form: { setError: UseFormSetError<V> },
  failure: MutationFailure | undefined,
  { fieldOf, unanswered }: { fieldOf: FieldOfIssue<V>; unanswered: string },
): FieldPath<V> | null {
  if (failure?.__typename === 'ValidationError') return showIssues(form, failure.issues ?? [], fieldOf);
  if (failure?.__typename === 'ConflictError') {
    return showIssues(form, [{ path: failure.field ?? '', message: failure.message ?? '' }], fieldOf);
  }
  form.setError('root.server', { message: failure?.message ?? unanswered });
  return null;
}

function showIssues<V extends FieldValues>(
  form: { setError: UseFormSetError<V> },
  issues: readonly Issue[],
  fieldOf: FieldOfIssue<V>,
): FieldPath<V> | null {
  let first: FieldPath<V> | null = null;
  const elsewhere: string[] = [];
  for (const issue of issues) {
    const target = fieldOf(issue);
    if (target) {
      form.setError(target.field, { type: 'server', message: target.message });
      first ??= target.field;
    } else elsewhere.push(issue.path ? `${issue.path}: ${issue.message}` : issue.message);
  }
  if (elsewhere.length > 0) form.setError('root.server', { message: elsewhere.join('; ') });
  return first;
}
