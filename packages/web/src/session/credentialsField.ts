import type { FieldOfIssue } from '../forms/formErrors.ts';
import type { Credentials } from './CredentialsForm.tsx';

/** Where a server issue about credentials belongs: on its field as the server says it, or above the form. */
export const credentialsField: FieldOfIssue<Credentials> = (issue) =>
  issue.path === 'email' || issue.path === 'password' ? { field: issue.path, message: issue.message } : null;
