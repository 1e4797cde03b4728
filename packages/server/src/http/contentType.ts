/**
 * Whether a Content-Type header names JSON (`application/json`, any case, parameters allowed).
 * Bodies that change state must be JSON: a cross-site HTML form can send form, multipart or
 * text/plain bodies without the browser asking first.
 */
export function isJsonContentType(type: string | undefined): boolean {
  return (type ?? '').split(';')[0]?.trim().toLowerCase() === 'application/json';
}
