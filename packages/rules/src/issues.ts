import type { z } from 'zod';

/** One thing wrong with an input: the field it concerns (dotted path, '' for the whole) and why. */
export type FieldIssue = { path: string; message: string };

export function issuesFromZod(error: z.ZodError, prefix: string[] = []): FieldIssue[] {
  return error.issues.map((issue) => ({
    path: [...prefix, ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
}
