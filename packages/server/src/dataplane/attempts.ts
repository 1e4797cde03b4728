/** One try of one model for a request: what the log entry, the metrics and the answer's headers report. */
export type Attempt = {
  model: string;
  provider: string;
  ok: boolean;
  status: number | null;
  error: string | null;
  latencyMs: number;
  /** What a failed attempt is charged (see failedAttemptCost); absent on the one that answered. */
  costUsd?: number;
};
