import OpenAI from 'openai';
import { expect } from 'vitest';

/**
 * What an application holds before it points an SDK at Gatehouse: an account's API key (the
 * first account, signed up through REST, `who` in its address) and gates made through REST.
 */
export type SdkAccount = {
  apiKey: string;
  /** A gate on mock/echo (chat) unless `settings` say otherwise; answers its id. */
  createGate(settings?: Record<string, unknown>): Promise<string>;
  /** The official `openai` SDK pointed at {base}/v1 with the key, the gate (if any) in its header. */
  openAI(gateId?: string, headers?: Record<string, string>): OpenAI;
};

const json = { 'content-type': 'application/json' };

export async function signUpForSdk(baseUrl: string, who: string): Promise<SdkAccount> {
  const res = await fetch(`${baseUrl}/v1/auth/signup`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ email: `${who}-${Date.now()}@example.com`, password: 'correct horse battery' }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const apiKey = ((await res.json()) as { apiKey: { key: string } }).apiKey.key;
  return {
    apiKey,
    async createGate(settings = {}) {
      const gate = await fetch(`${baseUrl}/v1/gates`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, ...json },
        body: JSON.stringify({
          name: `${who}-${crypto.randomUUID()}`,
          taskType: 'chat',
          model: 'mock/echo',
          ...settings,
        }),
      });
      expect(gate.status, await gate.clone().text()).toBe(201);
      return ((await gate.json()) as { id: string }).id;
    },
    openAI: (gateId, headers = {}) =>
      new OpenAI({
        baseURL: `${baseUrl}/v1`,
        apiKey,
        defaultHeaders: { ...(gateId && { 'x-gatehouse-gate-id': gateId }), ...headers },
        // The gateway does its own fallback; retries here would hide what it answered.
        maxRetries: 0,
      }),
  };
}
