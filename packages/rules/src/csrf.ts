/**
 * Double-submit CSRF: the server sets CSRF_COOKIE (readable by the dashboard) beside the session
 * cookie, and every state change echoes it in CSRF_HEADER, checked against the session.
 */
export const CSRF_COOKIE = 'gh_csrf';
export const CSRF_HEADER = 'x-csrf-token';
