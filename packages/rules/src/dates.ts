/**
 * The dates a client may name (a log window's bounds, the time inside a page cursor): from the
 * Unix epoch to the end of year 9999. Both ends are where the two sides part ways: PostgreSQL
 * has no year 0 and JavaScript prints years past 9999 as "+275760-…", which PostgreSQL cannot
 * read, so a date outside reached the database as it came and failed there (a 500). Nothing is
 * logged before 1970, and a window's default start (30 days before its end) stays storable too.
 */
import { z } from 'zod';

export const EARLIEST_DATE = new Date('1970-01-01T00:00:00.000Z');
export const LATEST_DATE = new Date('9999-12-31T23:59:59.999Z');

export const DATE_RANGE_MESSAGE = 'must be a date from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z';

/** True for a valid date within the range above. */
export function isAcceptedDate(date: Date): boolean {
  const time = date.getTime();
  return time >= EARLIEST_DATE.getTime() && time <= LATEST_DATE.getTime();
}

/** An ISO-8601 date-time with an offset ("Z" or "+02:00"), parsed to a Date within the range. */
export const dateTimeSchema = z.iso
  .datetime({ offset: true, message: 'must be an ISO-8601 date-time' })
  .transform((text) => new Date(text))
  .refine(isAcceptedDate, DATE_RANGE_MESSAGE);
