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
        expect(jsonTextShape(text, unbounded)).toMatchObject(shapeOf(JSON.parse(text)));
      }),
      { numRuns: 2_000 },
    );
  });

  it('counts an empty array as no member and spaces before its end as nothing', () => {
    expect(jsonTextShape('{"a":[ \n\t ],"b":[]}', unbounded)).toMatchObject({ members: 2, depth: 2 });
    expect(jsonTextShape('[ 1 ,\n 2 ]', unbounded)).toMatchObject({ members: 2, depth: 1 });
  });

  it('stops counting only past its bound', () => {
    fc.assert(
      fc.property(written, fc.nat(50), fc.nat(6), ([value, indent], maxMembers, maxDepth) => {
        const text = JSON.stringify(value, null, indent);
        const exact = shapeOf(value);
        const counted = jsonTextShape(text, { members: maxMembers, depth: maxDepth });
        const over = exact.members > maxMembers || exact.depth > maxDepth;
        expect(counted.members > maxMembers || counted.depth > maxDepth).toBe(over);
        if (!over) expect(counted).toMatchObject(exact);
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
    ).toMatchObject({
      members: 50_000,
      depth: 2,
    });
  });
});

/** A JSON number as a client may write it: any sign, digits, fraction and exponent JSON allows. */
const anyNumberText = fc
  .tuple(
    fc.constantFrom('', '-'),
    fc.stringMatching(/^(0|[1-9][0-9]{0,24})$/),
    fc.option(fc.stringMatching(/^[0-9]{1,24}$/)),
    fc.option(
      fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.stringMatching(/^[0-9]{1,3}$/)),
    ),
  )
  .map(
    ([sign, integer, fraction, exponent]) =>
      `${sign}${integer}${fraction === null ? '' : `.${fraction}`}${exponent === null ? '' : exponent.join('')}`,
  );

/** The same, and integers next to a power of ten (rounding up to it can take a digit more). */
const numberText = fc.oneof(
  anyNumberText,
  fc
    .tuple(fc.constantFrom('', '-'), fc.integer({ min: 1, max: 25 }), fc.stringMatching(/^[0-9]{0,3}$/))
    .map(([sign, nines, tail]) => `${sign}${'9'.repeat(nines)}${tail}`),
);

/** A string as a client may write it: each character as itself where JSON allows, or escaped. */
const stringText = fc
  .array(
    fc.oneof(
      fc.tuple(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
        fc.constantFrom('as is', 'escaped'),
      ),
      fc.constant(['\\/', 'written'] as const),
      fc.constant(['\\ud800', 'written'] as const),
    ),
  )
  .map(
    (chars) =>
      `"${chars
        .map(([char, how]) => {
          if (how === 'written') return char;
          if (how === 'as is') return JSON.stringify(char).slice(1, -1);
          return [...char].map((_, i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');
        })
        .join('')}"`,
  );

const space = fc.constantFrom('', ' ', '\n  ', '\t');

/** Bytes of `text`'s value written back by JSON.stringify, and the bound counted on the text. */
function writtenAndBound(text: string) {
  return {
    written: Buffer.byteLength(JSON.stringify(JSON.parse(text))),
    bound: Buffer.byteLength(text) + jsonTextShape(text, unbounded).growth,
  };
}

/** The value of `text` written back by JSON.stringify takes no more bytes than its bound. */
function expectWithinBound(text: string) {
  const { written, bound } = writtenAndBound(text);
  expect(written, text.slice(0, 200)).toBeLessThanOrEqual(bound);
}

describe('the bytes of a JSON body written back, bounded on its text', () => {
  it('holds for any number, however it is written', () => {
    const edges = ['1e20', '-1e20', '1e21', '1E+2', '1e-7', '1.2345678901234567e-6', '5e-324', '1e400', '-0'];
    const more = ['0.1e1', '123456789012345678', '-0.0000012345678901234567', '0.0000001', '100.0', '0.50'];
    // Nines that round up to the next power of ten: one digit more unless a fraction pays for it.
    const nines = Array.from({ length: 25 }, (_, i) => '9'.repeat(i + 1)).flatMap((n) => [
      n,
      `-${n}`,
      `${n}.9`,
    ]);
    for (const n of [...edges, ...more, ...nines]) expectWithinBound(n);
    fc.assert(fc.property(numberText, expectWithinBound), { numRuns: 20_000 });
  });

  it('holds for bodies with numbers, escapes and spaces anywhere', () => {
    const body = fc
      .tuple(fc.array(numberText), fc.array(stringText), written, space, space)
      .map(
        ([numbers, strings, [value, indent], a, b]) =>
          `{${a}"n":${b}[${numbers.join(`,${a}`)}],${b}"s":[${strings.join(',')}],"v":${JSON.stringify(value, null, indent)},"n":${a}${numbers[0] ?? 1}}`,
      );
    fc.assert(fc.property(body, expectWithinBound), { numRuns: 2_000 });
  });

  it('adds nothing for what JavaScript writes as it is sent: integers, short decimals, strings', () => {
    const text =
      '{"max_tokens": 32000, "temperature": 0.7, "top_p": 1, "logit_bias": {"50256": -100}, "x": "é\\u00e9"}';
    const { written, bound } = writtenAndBound(text);
    expect(bound).toBe(Buffer.byteLength(text));
    expect(written).toBeLessThan(bound);
  });
});
