/** How the log pages write numbers, money and time. */

const usdCents = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumFractionDigits: 4,
});
const usdFraction = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  maximumSignificantDigits: 3,
});
const usdLarge = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
const integer = new Intl.NumberFormat('en-US');

/**
 * A single request costs a fraction of a cent: below a cent its first three significant digits
 * show ($0.0000045), cents get up to four decimals, large sums the usual two.
 */
export function formatUsd(amount: number): string {
  const size = Math.abs(amount);
  if (size === 0) return usdCents.format(0);
  if (size < 0.01) return usdFraction.format(amount);
  return size >= 100 ? usdLarge.format(amount) : usdCents.format(amount);
}

export function formatCount(value: number): string {
  return integer.format(value);
}

export function formatMs(ms: number): string {
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${integer.format(ms)} ms`;
}

/**
 * When a request was logged, in UTC and saying so, to the second: "2026-11-27 10:41:03 UTC".
 * Server and provider logs keep UTC; an entry read beside them matches whatever the reader's zone.
 */
export function formatLogTime(iso: string): string {
  return `${new Date(iso).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** Month, day and a 24-hour clock to the second. */
const toTheSecond: Intl.DateTimeFormatOptions = {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hour12: false,
};

const dateTimeFormat = new Intl.DateTimeFormat('en-US', {
  year: 'numeric',
  ...toTheSecond,
  timeZoneName: 'short',
});

/** Local time with the year and zone: "Nov 21, 2026, 20:14:38 UTC". */
export function formatDateTime(iso: string): string {
  return dateTimeFormat.format(new Date(iso));
}

const utc = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });

/** A moment in UTC, minutes shown, zone named: for times that matter to the day (keys, periods). */
export function formatUtc(date: Date | string): string {
  return `${utc.format(new Date(date))} UTC`;
}
