/** The log's choices that the server's filters and the dashboard's log page share. */

/** A log entry's outcome, as the log filter names it: `success` or `failed`. */
export const LOG_STATUSES = ['success', 'failed'] as const;
export type LogStatus = (typeof LOG_STATUSES)[number];
