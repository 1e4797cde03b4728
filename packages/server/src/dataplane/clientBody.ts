/**
 * What the client sent, as the log entry of a request refused before any provider call keeps it:
 * such an entry has no provider request to show what went wrong, so its client's body stands in
 * (every other entry goes without, to keep the hot path's rows small). Files stand as a note of
 * their type and size, never their bytes; the providers' credentials are taken out as from the
 * rest of the log; past the bound, the first bytes of its JSON are kept with a note saying so.
 */
import { mediaNote } from '../domain/audioFile.ts';
import { rememberWireText } from '../providers/wireText.ts';

/** The bytes of a client's body a log entry keeps, unless configured (GATEHOUSE_LOG_CLIENT_BODY_BYTES). */
export const CLIENT_BODY_BYTES = 256 * 1024;

/**
 * How deep files are looked for: the multipart readers put them within the first levels of the
 * body object (`file`, `upload.bytes`); a JSON body has none, and need not be walked whole.
 */
const FILE_DEPTH = 3;

/** `value` with each file or byte array in it (to FILE_DEPTH) as a note; the same object when it has none. */
function withoutBytes(value: unknown, depth = 0): unknown {
  if (value instanceof Blob) {
    const name = (value as Partial<File>).name;
    return mediaNote(
      value.type || 'application/octet-stream',
      value.size,
      `${name ? `${name}, ` : ''}not logged`,
    );
  }
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
    return mediaNote('application/octet-stream', value.byteLength, 'not logged');
  }
  if (typeof value !== 'object' || value === null || depth >= FILE_DEPTH) return value;
  let copy: Record<string, unknown> | unknown[] | null = null;
  const entries = Array.isArray(value) ? value.entries() : Object.entries(value);
  for (const [key, item] of entries) {
    const noted = withoutBytes(item, depth + 1);
    if (noted === item) continue;
    copy ??= Array.isArray(value) ? [...value] : { ...value };
    (copy as Record<string | number, unknown>)[key] = noted;
  }
  return copy ?? value;
}

/** The first `maxBytes` of `text` in UTF-8, never ending inside a character. */
function cut(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  let end = maxBytes;
  // A continuation byte (10xxxxxx) at the cut belongs to a character that would be split.
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8');
}

/**
 * The client's `body` as its log entry keeps it: the JSON it sent (a body that is not JSON, as
 * text), its files as notes, `redact` applied to its text, and cut to `maxBytes` of JSON text
 * with a note (`{gatehouse, text}`) when longer.
 */
export function loggedClientBody(
  body: unknown,
  opts: { maxBytes: number; redact: (text: string) => string },
): unknown {
  const noted = withoutBytes(body);
  let text: string;
  try {
    text = typeof noted === 'string' ? noted : (JSON.stringify(noted) ?? 'null');
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).slice(0, 200);
    return { gatehouse: `body not stored: ${reason}` };
  }
  const redacted = opts.redact(text);
  const bytes = Buffer.byteLength(redacted);
  if (bytes > opts.maxBytes) {
    const kept = cut(redacted, opts.maxBytes);
    return {
      gatehouse: `truncated: the body was ${bytes.toLocaleString('en-US')} bytes, the first ${Buffer.byteLength(kept).toLocaleString('en-US')} are kept as text`,
      text: kept,
    };
  }
  if (typeof noted === 'string') return redacted;
  // Only a credential found costs a parse; otherwise the text just written is what the log stores.
  const value = redacted === text ? noted : JSON.parse(redacted);
  rememberWireText(value, redacted);
  return value;
}
