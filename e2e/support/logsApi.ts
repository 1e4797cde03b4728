import { api } from './account.ts';

/** What GET /v1/logs and GET /v1/logs/:id answer for one entry (the fields the tests read). */
export type LoggedEntry = {
  id: string;
  gate_id: string | null;
  gate_name: string | null;
  model_requested: string | null;
  model_used: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
  latency_ms: number;
  success: boolean;
  status_code: number;
  error_code: string | null;
  error_message: string | null;
  created_at: string;
  /** The calls the model made, in OpenAI's chat shape ({ id, type, function: { name, arguments } }). */
  tool_calls: unknown[] | null;
  /** The tool results the request carried ({ tool_call_id, content }). */
  tool_results: unknown[] | null;
  attempts?: { model: string; provider: string; ok: boolean; status: number | null; error: string | null }[];
  provider_request?: unknown;
  provider_response?: unknown;
};

/** The REST API as an application uses it, with the account's API key. */
export function gatewayClient(baseUrl: string, apiKey: string) {
  const request = api(baseUrl, apiKey);
  const call = async (method: string, path: string, body?: unknown) => {
    const { status, body: answer } = await request(method, path, body);
    return { status, body: answer as Record<string, unknown> };
  };

  return {
    async createGate(settings: Record<string, unknown>): Promise<string> {
      const { status, body } = await call('POST', '/v1/gates', { taskType: 'chat', ...settings });
      if (status !== 201) throw new Error(`POST /v1/gates answered ${status}: ${JSON.stringify(body)}`);
      return body.id as string;
    },

    /** POST /v3/chat with one user message, or with the `data` given. */
    chat(gateId: string, content: string | Record<string, unknown>) {
      const data = typeof content === 'string' ? { messages: [{ role: 'user', content }] } : content;
      return call('POST', '/v3/chat', { gateId, data });
    },

    /** The newest entries, once at least `count` are written (the log writer batches them). */
    async logsWhenWritten(count: number): Promise<LoggedEntry[]> {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const { body } = await call('GET', '/v1/logs?limit=200');
        const logs = body.logs as LoggedEntry[];
        if (logs.length >= count) return logs;
        if (Date.now() > deadline)
          throw new Error(`Only ${logs.length} of ${count} log entries were written`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },

    async log(id: string): Promise<LoggedEntry> {
      const { status, body } = await call('GET', `/v1/logs/${id}`);
      if (status !== 200) throw new Error(`GET /v1/logs/${id} answered ${status}`);
      return body as unknown as LoggedEntry;
    },
  };
}

/** "$0.0000045" as a number. */
export const dollars = (text: string) => Number(text.replace(/[$,\s]/g, ''));

/**
 * Whether a shown amount is `amount` as the dashboard rounds it: three significant digits below
 * a cent, four decimals above.
 */
export function showsDollars(text: string, amount: number): boolean {
  const tolerance = Math.abs(amount) < 0.01 ? Math.abs(amount) * 0.005 : 0.00005;
  return Math.abs(dollars(text) - amount) <= tolerance + Number.EPSILON;
}
