import { describe, expect, it } from 'vitest';
import { formatLogTime, formatMs, formatUsd } from './format.ts';

describe('money and time in the log', () => {
  it('keeps three significant digits of a fraction of a cent, four decimals above', () => {
    expect(formatUsd(0)).toBe('$0.00');
    expect(formatUsd(0.0000045)).toBe('$0.0000045');
    expect(formatUsd(0.000012345)).toBe('$0.0000123');
    expect(formatUsd(0.0123456)).toBe('$0.0123');
    expect(formatUsd(1.5)).toBe('$1.50');
    expect(formatUsd(1234.567)).toBe('$1,234.57');
  });

  it('writes latency in milliseconds, and seconds from ten of them', () => {
    expect(formatMs(0)).toBe('0 ms');
    expect(formatMs(1234)).toBe('1,234 ms');
    expect(formatMs(12_345)).toBe('12.3 s');
  });

  it('writes a log time in UTC to the second, naming the zone', () => {
    expect(formatLogTime('2026-11-27T10:41:03.512Z')).toBe('2026-11-27 10:41:03 UTC');
    expect(formatLogTime('2026-11-27T23:59:59.999+02:00')).toBe('2026-11-27 21:59:59 UTC');
  });
});
