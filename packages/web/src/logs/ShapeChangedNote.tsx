/**
 * A fallback answered in another shape than the gate's primary model gives ("dimensions 1536 ->
 * 3072"): as the log entry records it, and as x-gatehouse-shape-changed says it to Try it.
 */
export function ShapeChangedNote({ note }: { note: string }) {
  return (
    <div className="banner warning" role="note" aria-label="Answer shape changed">
      A fallback answered in another shape than the primary model gives: <strong>{note}</strong>. Its vectors
      cannot be compared with the primary’s.
    </div>
  );
}
