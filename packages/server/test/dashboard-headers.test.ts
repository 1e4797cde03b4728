/**
 * The dashboard's pages and assets carry a strict Content-Security-Policy, refuse to be framed and
 * forbid MIME sniffing; the API's answers are not pages and are left as they were.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';

const dist = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-web-'));
writeFileSync(path.join(dist, 'index.html'), '<!doctype html><div id="root"></div>');
writeFileSync(path.join(dist, 'app.js'), 'console.log(1)');
const app = useTestApp({ GATEHOUSE_WEB_DIST: dist });

function expectDashboardHeaders(res: Response) {
  const csp = res.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'self'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toMatch(/script-src[^;]*unsafe/);
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("object-src 'none'");
  expect(res.headers.get('x-frame-options')).toBe('DENY');
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
}

describe('dashboard security headers', () => {
  it('are sent with the page, on any client-side route, and with its assets', async () => {
    for (const route of ['/', '/gates/123', '/logs?status=failed']) {
      const res = await app.request(route);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('id="root"');
      expectDashboardHeaders(res);
    }
    const asset = await app.request('/app.js');
    expect(asset.status).toBe(200);
    expectDashboardHeaders(asset);
  });

  it('are not the API’s: its answers keep their own headers', async () => {
    const res = await app.request('/healthz');
    expect(res.headers.get('content-security-policy')).toBeNull();
  });
});
