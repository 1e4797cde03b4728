/**
 * Bounds on a JSON value a client hands over as a structure of its own: a response schema, the
 * gate's stored one or a request's. Checked before anything walks the value recursively: one
 * nested thousands deep overflows the stack of every recursive walk (zod's, Ajv's, ours), and a
 * large one costs Ajv's compiler time on each request that sends it.
 */
export const RESPONSE_SCHEMA_LIMITS = {
  /** Objects and arrays inside one another, the outermost counted as 1. */
  maxDepth: 64,
  /** The schema as JSON text, in UTF-8 bytes. */
  maxBytes: 65_536,
} as const;

/** True when `value` nests objects and arrays more than `limit` deep; walks without recursion. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (item === null || typeof item !== 'object') continue;
    if (depth > limit) return true;
    for (const inner of Array.isArray(item) ? item : Object.values(item)) {
      if (inner !== null && typeof inner === 'object') pending.push([inner, depth + 1]);
    }
  }
  return false;
}

const utf8 = new TextEncoder();

/** Why `schema` is too deep or too large to be a response schema, or null. */
export function responseSchemaSizeProblem(schema: unknown): string | null {
  const { maxDepth, maxBytes } = RESPONSE_SCHEMA_LIMITS;
  if (nestsDeeperThan(schema, maxDepth)) {
    return `must not nest objects and arrays more than ${maxDepth} deep`;
  }
  // Bounded depth first, so that this cannot overflow the stack either.
  const bytes = utf8.encode(JSON.stringify(schema) ?? '').length;
  if (bytes > maxBytes) return `must be at most ${maxBytes} bytes as JSON (this one is ${bytes})`;
  return null;
}
