import { z } from 'zod';

// zod's own pattern for z.uuid(), tested directly: a safeParse costs several times the test on
// the chat path, where every request's gate id is checked.
const uuid = z.regexes.uuid();

/** True for a UUID in canonical text form, as every id of ours is. */
export const isUuid = (value: unknown): value is string => typeof value === 'string' && uuid.test(value);
