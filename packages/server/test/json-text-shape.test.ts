/**
 * The body's shape counted on its text (jsonTextShape, what readJson refuses a body by) against
 * the same counted on the parsed value: for any JSON, written compactly or indented, with any
 * characters in its strings (escaped quotes and backslashes among them), the two agree; past a
 * bound the count stops, but only once it is over it.
 */
import { JSON_BODY_LIMITS, jsonTextShape } from '@gatehouse/rules/jsonLimits';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

/** Keys and array items at every level, and how deep containers nest (a scalar: 0), from the value. */
function shapeOf(value: unknown): { members: number; depth: number } {
  if (value === null || typeof value !== 'object') return { members: 0, depth: 0 };
  const items = Array.isArray(value) ? value : Object.values(value);
  let members = items.length;
  let depth = 0;
  for (const item of items) {
    const inner = shapeOf(item);
    members += inner.members;
    depth = Math.max(depth, inner.depth);
  }
  return { members, depth: depth + 1 };
}

const unbounded = { members: Number.MAX_SAFE_INTEGER, depth: Number.MAX_SAFE_INTEGER };
const written = fc.tuple(fc.jsonValue({ maxDepth: 6 }), fc.constantFrom(undefined, 0, 1, 2, '\t', ' \n '));

describe('a JSON body counted on its text', () => {
  it('has the members and depth of the value it parses to', () => {
    fc.assert(
      fc.property(written, ([value, indent]) => {
        const text = JSON.stringify(value, null, indent);
        expect(jsonTextShape(text, unbounded)).toEqual(shapeOf(JSON.parse(text)));
      }),
      { numRuns: 2_000 },
    );
  });

  it('counts an empty array as no member and spaces before its end as nothing', () => {
    expect(jsonTextShape('{"a":[ \n\t ],"b":[]}', unbounded)).toEqual({ members: 2, depth: 2 });
    expect(jsonTextShape('[ 1 ,\n 2 ]', unbounded)).toEqual({ members: 2, depth: 1 });
  });

  it('stops counting only past its bound', () => {
    fc.assert(
      fc.property(written, fc.nat(50), fc.nat(6), ([value, indent], maxMembers, maxDepth) => {
        const text = JSON.stringify(value, null, indent);
        const exact = shapeOf(value);
        const counted = jsonTextShape(text, { members: maxMembers, depth: maxDepth });
        const over = exact.members > maxMembers || exact.depth > maxDepth;
        expect(counted.members > maxMembers || counted.depth > maxDepth).toBe(over);
        if (!over) expect(counted).toEqual(exact);
      }),
      { numRuns: 2_000 },
    );
  });

  it('holds a body as large as the bound allows to its members', () => {
    const text = JSON.stringify({
      metadata: Object.fromEntries(Array.from({ length: 49_999 }, (_, i) => [`k${i}`, i])),
    });
    expect(
      jsonTextShape(text, { members: JSON_BODY_LIMITS.maxMembers, depth: JSON_BODY_LIMITS.maxDepth }),
    ).toEqual({
      members: 50_000,
      depth: 2,
    });
  });
});
