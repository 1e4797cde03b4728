import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpInBrowser } from './support/account.ts';
import { launchBrowser, type RunningBrowser } from './support/browser.ts';
import { gatewayClient } from './support/logsApi.ts';
import { type RunningServer, startServer } from './support/server.ts';

const artifacts = path.join(import.meta.dirname, 'artifacts');
const PHONE = { width: 390, height: 844 };

/**
 * The dashboard on a phone-sized window: no page is wider than the window, and the top bar's
 * links and Sign out are on screen, not pushed past its right edge.
 */
describe('the dashboard at 390 px', () => {
  let server: RunningServer;
  let browser: RunningBrowser;
  let page: Page;
  let gateId = '';

  beforeAll(async () => {
    await mkdir(artifacts, { recursive: true });
    server = await startServer();
    browser = await launchBrowser();
    page = await browser.context.newPage();
    await page.setViewportSize(PHONE);
    const { apiKey } = await signUpInBrowser(page, server.url, {
      // A long address, as real ones are: it must not widen the bar either.
      email: `phone-owner-${Date.now()}@example.com`,
    });
    const api = gatewayClient(server.url, apiKey);
    gateId = await api.createGate({ name: 'Support bot on the phone', model: 'mock/echo' });
    await api.chat(gateId, 'hello from a phone');
    await api.chat(gateId, 'boom [mock:fail=500]');
    await api.logsWhenWritten(2);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** Where the element sits across the window, once it is shown. */
  const across = async (locator: Locator) => {
    await locator.waitFor({ state: 'visible' });
    const box = await locator.boundingBox();
    if (!box) throw new Error('no box');
    return { left: box.x, right: box.x + box.width };
  };

  const pages = [
    { name: 'overview', path: () => '/', ready: () => page.getByRole('heading', { name: 'Overview' }) },
    {
      name: 'gates',
      path: () => '/gates',
      ready: () => page.getByRole('row').filter({ hasText: 'Support bot on the phone' }),
    },
    {
      name: 'gate',
      path: () => `/gates/${gateId}`,
      ready: () => page.getByRole('heading', { name: 'Support bot on the phone' }),
    },
    { name: 'logs', path: () => '/logs', ready: () => page.locator('table.logs-table tbody tr').nth(1) },
    {
      name: 'api-keys',
      path: () => '/api-keys',
      ready: () => page.getByRole('heading', { name: 'API keys' }),
    },
    {
      name: 'settings',
      path: () => '/settings',
      ready: () => page.getByRole('heading', { name: 'Settings' }),
    },
  ];

  for (const shown of pages) {
    it(`fits the ${shown.name} page in the window, with the whole top bar on screen`, async () => {
      await page.goto(`${server.url}${shown.path()}`);
      await shown.ready().first().waitFor();
      await page.waitForLoadState('networkidle');
      await page.screenshot({ path: path.join(artifacts, `phone-${shown.name}.png`), fullPage: true });

      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(width, `${shown.name} is ${width} px wide`).toBeLessThanOrEqual(PHONE.width);

      const controls = {
        'API keys': page.getByRole('link', { name: 'API keys', exact: true }),
        Settings: page.getByRole('link', { name: 'Settings', exact: true }),
        'Sign out': page.getByRole('button', { name: 'Sign out' }),
      };
      for (const [name, control] of Object.entries(controls)) {
        const { left, right } = await across(control);
        expect(left, `${name} starts at ${left} px`).toBeGreaterThanOrEqual(0);
        expect(right, `${name} ends at ${right} px`).toBeLessThanOrEqual(PHONE.width);
      }
    });
  }

  it('keeps the top bar on one line at 1440 px', async () => {
    await page.setViewportSize({ width: 1440, height: 900 });
    try {
      await page.goto(`${server.url}/logs`);
      await page.locator('table.logs-table tbody tr').nth(1).waitFor();
      const middle = async (locator: Locator) => {
        const box = await locator.boundingBox();
        if (!box) throw new Error('no box');
        return Math.round(box.y + box.height / 2);
      };
      const brand = await middle(page.getByRole('link', { name: 'Gatehouse' }));
      for (const control of [
        page.getByRole('link', { name: 'Overview', exact: true }),
        page.getByRole('link', { name: 'Settings', exact: true }),
        page.getByRole('button', { name: 'Sign out' }),
      ]) {
        expect(Math.abs((await middle(control)) - brand)).toBeLessThanOrEqual(2);
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1440);
    } finally {
      await page.setViewportSize(PHONE);
    }
  });

  it('scrolls the log table inside its own box, keeping the time column reachable', async () => {
    await page.goto(`${server.url}/logs`);
    await page.locator('table.logs-table tbody tr').nth(1).waitFor();
    const wrap = page.locator('.table-wrap').filter({ has: page.locator('table.logs-table') });
    const { clientWidth, scrollWidth } = await wrap.evaluate((element) => ({
      clientWidth: element.clientWidth,
      scrollWidth: element.scrollWidth,
    }));
    expect(clientWidth).toBeLessThanOrEqual(PHONE.width);
    // The last column scrolls into view within the table's box, not off the page.
    const last = page.locator('table.logs-table thead th').last();
    await last.scrollIntoViewIfNeeded();
    const { left, right } = await across(last);
    expect(left).toBeGreaterThanOrEqual(0);
    expect(right).toBeLessThanOrEqual(PHONE.width);
    // Seven columns do not fit a phone: the box scrolls, the window does not.
    expect(scrollWidth).toBeGreaterThan(clientWidth);
    expect(await page.evaluate(() => window.scrollX)).toBe(0);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
  });
});
