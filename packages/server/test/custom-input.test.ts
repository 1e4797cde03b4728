/**
 * A custom tool's call streamed from a provider of another family (Codex's apply_patch on an
 * Anthropic model): its text is decoded from the function arguments as they arrive, each
 * fragment read once. Re-reading everything received on each fragment made a 110 KB patch in
 * 4-character fragments hold the event loop for 12.6 s.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { customInputStream } from '../src/dataplane/customTools.ts';

/** A patch's worth of text with every kind of escape and characters beyond the BMP. */
function patchText(size: number): string {
  const line = '+\tconst s = "quoted \\ back/slash";\r\n-é ☃ 😀 \u0001 \u2028 end\n';
  return line.repeat(Math.ceil(size / line.length)).slice(0, size);
}

function fragments(text: string, width: number): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += width) out.push(text.slice(at, at + width));
  return out;
}

/** What a client is sent: each push's text, then what the end adds. */
function streamed(args: string, width: number) {
  const stream = customInputStream();
  const pushes = fragments(args, width).map((f) => stream.push(f));
  const { input, rest } = stream.end();
  return { pushes, input, rest };
}

afterEach(() => vi.restoreAllMocks());

describe('a custom call’s input streamed in small fragments', () => {
  it('is decoded once: a 20 KB input in 4-character fragments costs no JSON.parse per fragment', () => {
    const input = patchText(20_000);
    const args = JSON.stringify({ input });
    const parse = vi.spyOn(JSON, 'parse');
    const { pushes, rest } = streamed(args, 4);
    // Only the end reads the whole arguments (once); before, each of the 5,000 fragments did.
    expect(parse.mock.calls.length).toBeLessThanOrEqual(1);
    expect(pushes.join('') + rest).toBe(input);
    expect(rest).toBe('');
  });

  it('gives a 200 KB input whole, piece by piece, as its fragments arrive', { timeout: 120_000 }, () => {
    const input = patchText(200_000);
    const args = JSON.stringify({ input });
    const { pushes, input: whole, rest } = streamed(args, 4);
    expect(whole).toBe(input);
    expect(pushes.join('')).toBe(input);
    expect(rest).toBe('');
  });

  it('holds back an escape or a surrogate pair cut between fragments, at every cut', () => {
    const input = 'a"b\\c/\n\té😀☃\u0001z';
    const args = ` { "input" : ${JSON.stringify(input).replace('é', '\\u00e9').replace('😀', '\\ud83d\\ude00')} }`;
    for (const width of [1, 2, 3, 5, 7]) {
      const { pushes, rest } = streamed(args, width);
      expect(pushes.join('') + rest, `fragments of ${width}`).toBe(input);
      for (const p of pushes) {
        const last = p.charCodeAt(p.length - 1);
        expect(last >= 0xd800 && last <= 0xdbff, `a lone high surrogate in ${JSON.stringify(p)}`).toBe(false);
      }
    }
    // Cut inside the opening, an escape, and the surrogate pair: each piece comes once whole.
    const stream = customInputStream();
    expect(stream.push('{"inp')).toBe('');
    expect(stream.push('ut": "ab\\')).toBe('ab');
    expect(stream.push('u00')).toBe('');
    expect(stream.push('e9\\ud83d')).toBe('é');
    expect(stream.push('\\ude00"}')).toBe('😀');
    expect(stream.end()).toEqual({ input: 'ab\u00e9😀', rest: '' });
  });

  it('arguments in another shape, or a string JSON refuses, give nothing until the end', () => {
    const other = customInputStream();
    expect(other.push('{"path": "a.txt",')).toBe('');
    expect(other.push(' "input": "x"}')).toBe('');
    expect(other.end()).toEqual({ input: 'x', rest: 'x' });
    const bad = customInputStream();
    expect(bad.push('{"input": "ok ')).toBe('ok ');
    expect(bad.push('then \\q')).toBe('');
    expect(bad.push('more')).toBe('');
  });
});
