/**
 * What the database stores exactly as it was sent. PostgreSQL's text and jsonb hold neither
 * U+0000 nor an unpaired UTF-16 surrogate: the first fails the write (a 500), the second fails in
 * jsonb and is silently replaced in text. And a "__proto__" key inside a JSON value is dropped on
 * the way to the database, or crashes the Prisma client outright. Input is checked at the edge.
 */
export const STORABLE_TEXT_MESSAGE = 'must be valid Unicode text without NUL (\\u0000) characters';
export const PROTO_KEY_MESSAGE = 'must not use "__proto__" as a key';

const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && !UNPAIRED_SURROGATE.test(text);
}

/** True when every string and every key anywhere inside `value` is storable text. */
export function isStorableJson(value: unknown): boolean {
  if (typeof value === 'string') return isStorableText(value);
  if (Array.isArray(value)) return value.every(isStorableJson);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).every(([key, inner]) => isStorableText(key) && isStorableJson(inner));
  }
  return true;
}

/** True when no object anywhere inside `value` has an own "__proto__" key (as JSON.parse makes). */
export function hasNoProtoKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(hasNoProtoKey);
  if (value !== null && typeof value === 'object') {
    return !Object.hasOwn(value, '__proto__') && Object.values(value).every(hasNoProtoKey);
  }
  return true;
}
