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
  /** Embeddings: the length of the answer's vectors. */
  dimensions?: number;
  /**
   * The answer came from a model other than the one the request was meant for, in another shape
   * than that model gives: "dimensions 1536 -> 3072" (also the x-gatehouse-shape-changed header).
   */
  shapeNote?: string;
};

/**
 * An answer's shape where a client builds on it (embeddings: its vectors' length), and the shape
 * the request's primary model gives for the same request; null where that is not known.
 */
export type AnswerShape = { dimensions: number; primaryDimensions: number | null };

/** How an answer's shape differs from its primary's, in words; null where it does not (or is unknown). */
export function shapeChange(shape: AnswerShape): string | null {
  if (shape.primaryDimensions === null || shape.primaryDimensions === shape.dimensions) return null;
  return `dimensions ${shape.primaryDimensions} -> ${shape.dimensions}`;
}
