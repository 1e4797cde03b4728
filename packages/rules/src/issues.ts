import type { z } from 'zod';

/** One thing wrong with an input: the field it concerns (dotted path, '' for the whole) and why. */
export type FieldIssue = { path: string; message: string };

/** Each issue at its field; an unknown key (a strict object's) is named as the field it is. */
export function issuesFromZod(error: z.ZodError, prefix: string[] = []): FieldIssue[] {
  return error.issues.flatMap((issue) => {
    const at = [...prefix, ...issue.path.map(String)];
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: [...at, key].join('.'), message: 'is not a known field' }));
    }
    return [{ path: at.join('.'), message: issue.message }];
  });
}
