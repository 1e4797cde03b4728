import { describe, expect, it } from 'vitest';
import { formatMs, formatUsd } from './format.ts';

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
});
