/**
 * multipart/form-data bodies (file uploads: transcription and translation), parsed as they
 * arrive by @fastify/busboy, with every count bounded: a body of 100,000 tiny fields parsed whole
 * before anything counted them held the process for five seconds, only to be refused. Each
 * bound is refused as soon as it is passed, and what remains of the body is never parsed.
 */
import { Busboy } from '@fastify/busboy';
import type { Context } from 'hono';
import { ValidationError } from '../domain/errors.ts';
import { bodyChunks } from './errors.ts';

export const MULTIPART_LIMITS = {
  /** Parts (fields and files together) in one body. */
  maxParts: 64,
  /** File parts in one body: an upload route takes one file. */
  maxFiles: 1,
  /** Bytes of one field's value (a file's are bounded by the body's own limit). */
  maxFieldBytes: 65_536,
  /** Bytes of one part's name. */
  maxNameBytes: 100,
} as const;

export type MultipartForm = { fields: Record<string, string>; files: Record<string, File> };

const refuse = (path: string, message: string) => new ValidationError([{ path, message }]);

/**
 * The body as its text fields and its files, at most `maxBytes` long (a 413 past it) and within
 * MULTIPART_LIMITS (a 400 naming the bound past them). A later field of a name wins.
 */
export async function readMultipart(c: Context, maxBytes: number): Promise<MultipartForm> {
  const { maxParts, maxFiles, maxFieldBytes, maxNameBytes } = MULTIPART_LIMITS;
  let parser: InstanceType<typeof Busboy>;
  try {
    parser = Busboy({
      headers: { 'content-type': c.req.header('content-type') ?? '' },
      limits: {
        parts: maxParts,
        files: maxFiles,
        fieldSize: maxFieldBytes,
        fieldNameSize: maxNameBytes,
      },
    });
  } catch {
    throw refuse('', 'request body is not valid multipart form data (its content-type needs a boundary)');
  }
  // Without a prototype, a part named `__proto__` is a name like any other: on a plain object,
  // a file part of that name became the object's prototype.
  const fields: Record<string, string> = Object.create(null);
  const files: Record<string, File> = Object.create(null);
  const reading: Promise<void>[] = [];
  let problem: Error | null = null;
  const fail = (error: Error) => {
    problem ??= error;
  };
  parser.on('field', (name, value, nameTruncated, valueTruncated) => {
    if (nameTruncated) fail(refuse('', `part names must be at most ${maxNameBytes} bytes`));
    else if (valueTruncated) fail(refuse(name, `must be at most ${maxFieldBytes} bytes`));
    else fields[name] = value;
  });
  parser.on('file', (name, stream, filename, _encoding, mimeType) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    reading.push(
      new Promise((resolve) =>
        stream.on('end', () => {
          files[name] = new File([Buffer.concat(chunks)], filename, { type: mimeType });
          resolve();
        }),
      ),
    );
  });
  parser.on('partsLimit', () =>
    fail(refuse('', `must have at most ${maxParts} parts (fields and files together)`)),
  );
  parser.on('filesLimit', () => fail(refuse('', `must have at most ${maxFiles} file`)));
  const finished = new Promise<void>((resolve, reject) => {
    parser.on('finish', resolve);
    parser.on('error', reject);
  });
  // A parse error ends the read below; it is answered from there.
  finished.catch(() => {});
  let broken = false;
  parser.on('error', () => {
    broken = true;
  });
  for await (const chunk of bodyChunks(c, maxBytes)) {
    parser.write(chunk);
    if (problem) {
      // The rest is never read: the connection closes once the refusal is sent.
      c.header('connection', 'close');
      throw problem;
    }
    if (broken) break;
  }
  parser.end();
  try {
    await finished;
    await Promise.all(reading);
  } catch {
    throw refuse('', 'request body is not valid multipart form data');
  }
  if (problem) throw problem;
  return { fields, files };
}
