/**
 * The JSON fields of a log entry typed for display. The server stores them as JSON, so each item
 * is read defensively: an entry written by an older version must still open.
 */

export type AttemptView = {
  model: string;
  provider: string;
  ok: boolean;
  status: number | null;
  error: string | null;
  latencyMs: number | null;
  /** What the attempt was charged, where the entry says (older entries: failed attempts only). */
  costUsd: number | null;
  /** The charge is the attempt's worst case (it timed out or was cut off), not a bill. */
  costUpperBound: boolean;
  /** What the answer was billed in, where it was not tokens. */
  billed: BilledView | null;
  /** Embeddings: the length of the answer's vectors. */
  dimensions: number | null;
  /** A fallback answered in another shape than the primary gives: "dimensions 1536 -> 3072". */
  shapeNote: string | null;
};

export type BilledView = { quantity: number; unit: string };

export type ToolCallView = { id: string | null; name: string; arguments: unknown };
export type ToolResultView = { toolCallId: string | null; content: unknown };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const number = (value: unknown): number | null => (typeof value === 'number' ? value : null);

export function attemptsOf(json: unknown): AttemptView[] {
  if (!Array.isArray(json)) return [];
  return json.filter(isRecord).map((attempt) => ({
    model: text(attempt.model) ?? '—',
    provider: text(attempt.provider) ?? '—',
    ok: attempt.ok === true,
    status: number(attempt.status),
    error: text(attempt.error),
    latencyMs: number(attempt.latencyMs),
    costUsd: number(attempt.costUsd),
    costUpperBound: attempt.costUpperBound === true,
    billed:
      isRecord(attempt.billed) && typeof attempt.billed.quantity === 'number' && text(attempt.billed.unit)
        ? { quantity: attempt.billed.quantity, unit: String(attempt.billed.unit) }
        : null,
    dimensions: number(attempt.dimensions),
    shapeNote: text(attempt.shapeNote),
  }));
}

/** The answer's shape: its vectors' length, and the note when a fallback changed it. */
export function shapeOf(attempts: readonly AttemptView[]): {
  dimensions: number | null;
  note: string | null;
} {
  const answered = attempts.find((attempt) => attempt.ok);
  return { dimensions: answered?.dimensions ?? null, note: answered?.shapeNote ?? null };
}

/** What the answer was billed in, where tokens were not it: "2 images", "12.5 seconds". */
export function billedOf(attempts: readonly AttemptView[]): string | null {
  const billed = attempts.find((attempt) => attempt.ok)?.billed;
  if (!billed) return null;
  const quantity = billed.quantity.toLocaleString('en-US', { maximumFractionDigits: 2 });
  const unit = billed.quantity === 1 ? billed.unit.replace(/s$/, '') : billed.unit;
  return `${quantity} ${unit}`;
}

/** A single-quoted shell word: runs as the text it holds, whatever that text is. */
const shellQuoted = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/** The request to send this entry's request through its gate again (the server's `replayRequest`). */
export type ReplayRequest = { endpoint: string; data: Record<string, unknown> };

export function replayRequestOf(json: unknown): ReplayRequest | null {
  if (!isRecord(json) || typeof json.endpoint !== 'string' || !isRecord(json.data)) return null;
  return { endpoint: json.endpoint, data: json.data };
}

/** A runnable curl of the request to the gateway, the key left to the shell's $GATEHOUSE_KEY. */
export function curlOf(origin: string, gateId: string, request: ReplayRequest): string {
  const body = JSON.stringify({ gateId, data: request.data });
  return [
    `curl -s ${shellQuoted(origin + request.endpoint)}`,
    `  -H "authorization: Bearer $GATEHOUSE_KEY"`,
    `  -H 'content-type: application/json'`,
    `  -d ${shellQuoted(body)}`,
  ].join(' \\\n');
}

/** One message of a logged conversation (the server's `conversation`, in the native chat shape). */
export type MessageView = {
  role: string;
  text: string | null;
  toolCalls: { id: string | null; name: string; arguments: unknown }[];
  toolCallId: string | null;
};

const partsText = (content: unknown): string | null => {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  const parts = content.map((part) =>
    isRecord(part) ? (text(part.text) ?? (part.type === 'image_url' ? '[image]' : '')) : '',
  );
  return parts.filter((p) => p !== '').join('\n') || null;
};

export function messagesOf(json: unknown): MessageView[] | null {
  if (!Array.isArray(json)) return null;
  return json.filter(isRecord).map((m) => ({
    role: text(m.role) ?? 'unknown',
    text: partsText(m.content),
    toolCalls: toolCallsOf(m.tool_calls) ?? [],
    toolCallId: text(m.tool_call_id),
  }));
}

/**
 * The request fell back: an attempt failed before the one that answered. A model used that differs
 * from the one named is no sign of it (the gate's own model, a sub-gate's, a client's ignored name).
 */
export function fellBack(attempts: readonly AttemptView[]): boolean {
  const answered = attempts.findIndex((attempt) => attempt.ok);
  return answered > 0 && attempts.slice(0, answered).some((attempt) => !attempt.ok);
}

/** JSON given as a string (tool arguments, tool output) shown as the JSON it holds, if it is. */
export function parsedIfJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const trimmed = value.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return value;
  try {
    return JSON.parse(trimmed);
  } catch {
    return value;
  }
}

/** OpenAI-shaped tool calls ({ id, function: { name, arguments } }), or Anthropic tool_use blocks. */
export function toolCallsOf(json: unknown): ToolCallView[] | null {
  if (!Array.isArray(json)) return null;
  return json.map((call) => {
    if (!isRecord(call)) return { id: null, name: '(unnamed)', arguments: call };
    const fn = isRecord(call.function) ? call.function : call;
    return {
      id: text(call.id),
      name: text(fn.name) ?? '(unnamed)',
      arguments: parsedIfJson(fn.arguments ?? fn.input ?? null),
    };
  });
}

/** Tool results from the request: { tool_call_id, content }. */
export function toolResultsOf(json: unknown): ToolResultView[] | null {
  if (!Array.isArray(json)) return null;
  return json.map((result) =>
    isRecord(result)
      ? {
          toolCallId: text(result.tool_call_id) ?? text(result.tool_use_id),
          content: parsedIfJson(result.content),
        }
      : { toolCallId: null, content: result },
  );
}
