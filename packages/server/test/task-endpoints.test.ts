/**
 * Every task type the rules give an endpoint (TASK_ENDPOINTS, which the dashboard reads to say
 * whether a gate can be called) is served there, and a type without one is not: the dashboard's
 * word and the server agree.
 */
import { TASK_ENDPOINTS, TASK_TYPES } from '@gatehouse/rules/gate';
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { createGate, signUpUser } from './support/factories.ts';

const app = useTestApp();

describe('TASK_ENDPOINTS', () => {
  it.each(TASK_TYPES.map((t) => [t, TASK_ENDPOINTS[t]] as const))('%s → %s', async (taskType, endpoint) => {
    const user = await signUpUser(app);
    if (endpoint === null) {
      const res = await app.request(`/v3/${taskType}`, { method: 'POST', headers: user.auth, json: {} });
      expect(res.status).toBe(404);
      return;
    }
    // A gate of another type: the endpoint is served, and refuses it naming the gate.
    const other = await createGate(
      app,
      user,
      taskType === 'chat' ? { taskType: 'embeddings', model: 'mock/embed' } : {},
    );
    const res = await app.request(endpoint, {
      method: 'POST',
      headers: user.auth,
      json: { gateId: other.id, data: {} },
    });
    expect(res.status, await res.clone().text()).toBe(400);
  });
});
