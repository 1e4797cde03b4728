/** What one answer was billed in, where tokens are not what it was charged for. */
export type BilledUnits = { quantity: number; unit: 'images' | 'seconds' | 'characters' | 'pages' };

/** One try of one model for a request: what the log entry, the metrics and the answer's headers report. */
export type Attempt = {
  model: string;
  provider: string;
  ok: boolean;
  status: number | null;
  error: string | null;
  latencyMs: number;
  /** What the attempt was charged: a failed one's per failedAttemptCost, the answer's its own price. */
  costUsd?: number;
  /** The charge is the attempt's worst case (timed out, cut off, usage not believed), not its bill. */
  costUpperBound?: boolean;
  /** The answer's billed quantity, on a task type priced per image, second, character or page. */
  billed?: BilledUnits;
};
