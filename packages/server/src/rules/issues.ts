import type { z } from 'zod';
import type { FieldIssue } from '../domain/errors.ts';

export function issuesFromZod(error: z.ZodError, prefix: string[] = []): FieldIssue[] {
  return error.issues.map((issue) => ({
    path: [...prefix, ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
}
