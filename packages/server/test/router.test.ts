import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { RememberingRouter } from '../src/http/router.ts';

/** An app shaped like ours: a static path beside a parameter, middleware, a catch-all. */
function app() {
  const a = new Hono({ router: new RememberingRouter() });
  a.use('/v1/*', async (c, next) => {
    c.header('x-middleware', 'ran');
    await next();
  });
  a.get('/v1/gates/:id', (c) => c.text(`gate ${c.req.param('id')}`));
  a.post('/v1/gates/:id/rollback', (c) => c.text(`rollback ${c.req.param('id')}`));
  a.post('/v1/gates/suggestions', (c) => c.text('suggestions'));
  a.post('/v1/chat/completions', (c) => c.text('chat'));
  a.all('/v1/*', (c) => c.text('no such route', 404));
  return a;
}

describe('the remembering router', () => {
  it('answers a remembered path as it did the first time, middleware included', async () => {
    const a = app();
    for (let i = 0; i < 3; i++) {
      const res = await a.request('/v1/chat/completions', { method: 'POST' });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('chat');
      expect(res.headers.get('x-middleware')).toBe('ran');
    }
    const suggestions = await a.request('/v1/gates/suggestions', { method: 'POST' });
    expect(await suggestions.text()).toBe('suggestions');
    // The same path by another method is another match.
    expect((await a.request('/v1/chat/completions')).status).toBe(404);
  });

  it('searches a path with parameters every time: each request gets its own', async () => {
    const a = app();
    expect(await (await a.request('/v1/gates/one')).text()).toBe('gate one');
    expect(await (await a.request('/v1/gates/two')).text()).toBe('gate two');
    expect(await (await a.request('/v1/gates/two/rollback', { method: 'POST' })).text()).toBe('rollback two');
  });

  it('keeps answering right after more paths than it remembers', async () => {
    const a = app();
    for (let i = 0; i < 1200; i++) {
      const res = await a.request(`/v1/nothing-${i}`);
      expect(res.status).toBe(404);
    }
    expect(await (await a.request('/v1/chat/completions', { method: 'POST' })).text()).toBe('chat');
    expect(await (await a.request('/v1/gates/three')).text()).toBe('gate three');
  });
});
