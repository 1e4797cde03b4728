import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { signUpUser } from './support/factories.ts';

const app = useTestApp();

describe('API keys', () => {
  it('authenticates with the key issued at sign-up', async () => {
    const user = await signUpUser(app);
    const res = await app.request('/v1/gates', { headers: user.auth });
    expect(res.status).toBe(200);
  });

  it('stops a revoked key at once', async () => {
    const user = await signUpUser(app);
    const created = await app.request('/v1/api-keys', {
      method: 'POST',
      headers: user.auth,
      json: { name: 'ci' },
    });
    expect(created.status).toBe(201);
    const { id, key } = (await created.json()) as { id: string; key: string };
    expect((await app.request('/v1/gates', { headers: { authorization: `Bearer ${key}` } })).status).toBe(
      200,
    );
    expect((await app.request(`/v1/api-keys/${id}`, { method: 'DELETE', headers: user.auth })).status).toBe(
      204,
    );
    const after = await app.request('/v1/gates', { headers: { authorization: `Bearer ${key}` } });
    expect(after.status).toBe(401);
    expect(await after.json()).toMatchObject({ error: { code: 'unauthorized' } });
  });
});
