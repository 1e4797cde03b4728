import type { Credentials } from './CredentialsForm.tsx';

/** Where a server issue about credentials belongs: on its field, or above the form. */
export function credentialsField(path: string): keyof Credentials | 'root.server' {
  return path === 'email' || path === 'password' ? path : 'root.server';
}
