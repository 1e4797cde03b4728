import type { ApiKey } from '../generated/prisma/client.ts';

/** Who a data-plane request is for, as the pipeline and an agent gate's routing read it. */
export type TaskCaller = {
  userId: string;
  endpoint: string;
  /** The client's session, from the x-gatehouse-session-id header (a /v3 body's sessionId otherwise). */
  sessionKey?: string;
  /** The step an orchestrated agent gate is asked for, from the x-gatehouse-action header. */
  action?: string;
  /**
   * The body as the route read it, before parsing: kept on the entry of a request refused before
   * any provider call (clientBody.ts), where no provider request shows what the client sent.
   */
  body?: unknown;
  /** The API key the request came with (none from a dashboard session): its limits apply too. */
  apiKey?: ApiKey;
  /**
   * The end user the request names (x-gatehouse-user, OpenAI's `user`, Anthropic's
   * `metadata.user_id`): kept on its log entry; a gate's end-user limit holds it.
   */
  endUser?: string;
  /** The log entry this request replays (x-gatehouse-replay-of): its entry links back to it. */
  replayOf?: string;
};
