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
};

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
