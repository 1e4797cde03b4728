/** Where spending alerts may be sent: one rule for a gate's webhook and the account's default. */
import { z } from 'zod';

export const WEBHOOK_URL_MAX_LENGTH = 2000;

/** An http or https URL, at most WEBHOOK_URL_MAX_LENGTH characters; blank is refused, null clears. */
export const webhookUrlSchema = z
  .string()
  .trim()
  .min(1, 'must be an http or https URL')
  .max(WEBHOOK_URL_MAX_LENGTH, `must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be an http or https URL, such as https://example.com/hooks/spending');

/** The header that carries a delivery's signature: `sha256=` and the HMAC-SHA256 in hex. */
export const SIGNATURE_HEADER = 'x-gatehouse-signature';
/** The header that carries the Unix time (seconds) the signature was made at, signed with the body. */
export const TIMESTAMP_HEADER = 'x-gatehouse-timestamp';
