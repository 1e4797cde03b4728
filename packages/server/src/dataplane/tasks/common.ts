/** What the task types' requests share: the native envelope `{gateId, data, model?, sessionId?, metadata?}`. */
import { z } from 'zod';
import { metadata, params } from '../request.ts';

/** The body of a native `/v3/<type>` request, with `data` as the type reads it. */
export function nativeEnvelope<D extends z.ZodType>(data: D) {
  return z.object({
    gateId: z.uuid('must be a gate UUID'),
    data,
    model: params.model.optional(),
    sessionId: z.string().min(1).max(200).optional(),
    action: z.string().min(1).max(64).optional(),
    metadata: metadata.optional(),
  });
}

/** The envelope's fields every task request carries, without `undefined` values. */
export function envelopeFields(body: {
  model?: string | undefined;
  sessionId?: string | undefined;
  action?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}) {
  return {
    ...(body.model !== undefined && { model: body.model }),
    ...(body.sessionId !== undefined && { sessionId: body.sessionId }),
    ...(body.action !== undefined && { action: body.action }),
    ...(body.metadata !== undefined && { metadata: body.metadata }),
  };
}
