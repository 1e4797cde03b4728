import type { GateFormApi } from './GateFields.tsx';
import { type FieldIssue, fieldOfIssue, type GateFormField } from './gateForm.ts';

/**
 * Puts the server's issues on the fields they name, and the rest together above the form.
 * Returns the first field that got one (the page shows its tab and focuses it), or null.
 */
export function showServerIssues(form: GateFormApi, issues: FieldIssue[]): GateFormField | null {
  let first: GateFormField | null = null;
  const elsewhere: string[] = [];
  for (const issue of issues) {
    const target = fieldOfIssue(issue);
    if (target) {
      form.setError(target.field, { type: 'server', message: target.message });
      first ??= target.field;
    } else elsewhere.push(issue.path ? `${issue.path}: ${issue.message}` : issue.message);
  }
  if (elsewhere.length > 0) form.setError('root.server', { message: elsewhere.join('; ') });
  return first;
}
