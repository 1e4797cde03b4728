/**
 * The exact JSON text of what was sent to and received from a provider, kept beside the object
 * it became, so the log stores the bytes that crossed the wire without writing the object out
 * again (re-serialising both, on every request, was a measurable part of the request thread).
 * Weakly held: the text lives exactly as long as the object it belongs to.
 */
const texts = new WeakMap<object, string>();

/** Records `text` as the wire form of `value` (JSON.parse(text), or what JSON.stringify gave it). */
export function rememberWireText(value: unknown, text: string): void {
  if (typeof value === 'object' && value !== null) texts.set(value, text);
}

/** `value` as JSON: the text it crossed the wire as, if it did, else JSON.stringify's. */
export function jsonText(value: unknown): string {
  return (typeof value === 'object' && value !== null && texts.get(value)) || JSON.stringify(value);
}
