import { z } from 'zod';

// Built once: z.uuid() builds a new schema on every call, which on the chat path cost more
// than the check itself.
const uuid = z.uuid();

/** True for a UUID in canonical text form, as every id of ours is. */
export const isUuid = (value: unknown): value is string => uuid.safeParse(value).success;
