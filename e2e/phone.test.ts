import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpInBrowser } from './support/account.ts';
import { expectNoAxeViolations } from './support/axe.ts';
import { launchBrowser, type RunningBrowser } from './support/browser.ts';
import { gatewayClient } from './support/logsApi.ts';
import { type RunningServer, startServer } from './support/server.ts';

const artifacts = path.join(import.meta.dirname, 'artifacts');
const PHONE = { width: 390, height: 844 };

/**
 * The dashboard on a phone-sized window: every page fits it (a screenshot of each in
 * e2e/artifacts/phone-*.png), the top bar folds into a menu, tables show their rows as labelled
 * cards; and, at any size, the theme follows the system's light or dark setting, a skip link comes
 * first, and the gate's tabs answer the arrow keys.
 */
describe('the dashboard at 390 px, in both themes, by keyboard', () => {
  let server: RunningServer;
  let browser: RunningBrowser;
  let page: Page;
  let gateId = '';
  let agentId = '';
  let entryId = '';

  beforeAll(async () => {
    await mkdir(artifacts, { recursive: true });
    server = await startServer();
    browser = await launchBrowser();
    page = await browser.context.newPage();
    await page.setViewportSize(PHONE);
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

  /** The page is no wider than the phone, is photographed, and axe-core finds nothing in either theme. */
  const fitsThePhone = async (name: string) => {
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: path.join(artifacts, `phone-${name}.png`), fullPage: true });
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width, `${name} is ${width} px wide`).toBeLessThanOrEqual(PHONE.width);
    await expectNoAxeViolations(page, `the ${name} page at 390 px`);
  };

  it('fits the sign-up page, then signs up on the phone', async () => {
    await page.goto(server.url);
    await page.waitForURL('**/sign-up');
    await page.getByRole('button', { name: 'Create account' }).waitFor();
    await fitsThePhone('sign-up');

    const { apiKey } = await signUpInBrowser(page, server.url, {
      // A long address, as real ones are: it must not widen the bar either.
      email: `phone-owner-${Date.now()}@example.com`,
    });
    const api = gatewayClient(server.url, apiKey);
    gateId = await api.createGate({ name: 'Support bot on the phone', model: 'mock/echo' });
    agentId = await api.createGate({ name: 'Agent on the phone', model: 'mock/echo', gateType: 'agent' });
    await api.chat(gateId, 'hello from a phone');
    await api.chat(gateId, 'boom [mock:fail=500]');
    const inSession = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        'x-gatehouse-gate-id': agentId,
        'x-gatehouse-session-id': 'phone-run',
      },
      body: JSON.stringify({ model: 'mock/echo', messages: [{ role: 'user', content: 'plan' }] }),
    });
    expect(inSession.status, await inSession.text()).toBe(200);
    const logs = await api.logsWhenWritten(3);
    entryId = logs.find((entry) => !entry.success)?.id ?? '';
  });

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
    {
      name: 'session',
      path: () => `/gates/${agentId}/session?key=phone-run`,
      ready: () => page.getByRole('list', { name: 'Session requests' }),
    },
    { name: 'logs', path: () => '/logs', ready: () => page.locator('table.logs-table tbody tr').nth(2) },
    {
      name: 'log-entry',
      path: () => `/logs?entry=${entryId}`,
      ready: () => page.getByRole('heading', { name: /Attempts/ }),
      // The entry is a dialog over the window, the bar included, until it is closed (tested below).
      coversTheBar: true,
    },
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
    it(`fits the ${shown.name} page in the window, its links and Sign out behind the Menu button`, async () => {
      await page.goto(`${server.url}${shown.path()}`);
      await shown.ready().first().waitFor();
      await fitsThePhone(shown.name);
      if ('coversTheBar' in shown) return;

      const menu = page.getByRole('button', { name: 'Menu' });
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      expect(await page.getByRole('link', { name: 'Settings', exact: true }).isVisible()).toBe(false);
      await menu.click();
      expect(await menu.getAttribute('aria-expanded')).toBe('true');
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
      await menu.click();
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
    });
  }

  it('opens the menu from the keyboard, closes it on Escape, and on following a link', async () => {
    await page.goto(`${server.url}/gates`);
    const menu = page.getByRole('button', { name: 'Menu' });
    await menu.focus();
    await page.keyboard.press('Enter');
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Overview');
    await page.keyboard.press('Escape');
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await menu.evaluate((button) => button === document.activeElement)).toBe(true);
    await expect.poll(() => page.getByRole('link', { name: 'Logs', exact: true }).isVisible()).toBe(false);

    await menu.click();
    await page.getByRole('link', { name: 'Logs', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/logs');
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
  });

  it('opens a log entry as a full-screen dialog: Close at its top, Tab kept inside, the Menu back once closed', async () => {
    await page.goto(`${server.url}/logs`);
    const row = page.locator('table.logs-table tbody tr').filter({ has: page.locator('.badge.danger') });
    const opener = row.getByRole('link').first();
    await opener.click();
    const dialog = page.getByRole('dialog', { name: 'Log entry' });
    await dialog.getByRole('heading', { name: /Attempts/ }).waitFor();
    await expectNoAxeViolations(page, 'the log entry dialog at 390 px');

    // It covers the window, and the way out sits at its top, a finger wide.
    expect(await dialog.boundingBox()).toEqual({ x: 0, y: 0, width: PHONE.width, height: PHONE.height });
    const close = dialog.getByRole('button', { name: 'Close the entry' });
    const box = await close.boundingBox();
    if (!box) throw new Error('no box');
    expect(box.y).toBeLessThan(60);
    expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    expect(Math.min(box.width, box.height)).toBeGreaterThanOrEqual(44);
    // Still there, at the top, once the entry is read further down.
    await dialog.evaluate((element) => element.scrollTo(0, element.scrollHeight));
    expect((await close.boundingBox())?.y).toBeLessThan(60);
    expect(await close.isVisible()).toBe(true);

    // The focus starts in it and Tab never leaves it for the page behind.
    const where = () =>
      page.evaluate(() => {
        const active = document.activeElement;
        if (!active || active === document.body) return 'nowhere';
        return active.closest('dialog') ? 'dialog' : 'page';
      });
    expect(await where()).toBe('dialog');
    for (let i = 0; i < 40; i += 1) {
      await page.keyboard.press('Tab');
      expect(await where()).not.toBe('page');
    }
    // The page behind takes no tap: the dialog is on top of its Menu button.
    const menu = page.getByRole('button', { name: 'Menu' });
    expect(
      await menu.evaluate((button) => {
        const { x, y, width, height } = button.getBoundingClientRect();
        return document.elementFromPoint(x + width / 2, y + height / 2)?.closest('dialog') !== null;
      }),
    ).toBe(true);

    await close.click();
    await dialog.waitFor({ state: 'detached' });
    expect(new URL(page.url()).searchParams.get('entry')).toBeNull();
    expect(await opener.evaluate((link) => link === document.activeElement)).toBe(true);
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await page.getByRole('link', { name: 'Settings', exact: true }).waitFor();

    // Escape closes it too.
    await menu.click();
    await opener.click();
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
  });

  it('shows each log row as a card of labelled values, all inside the window', async () => {
    await page.goto(`${server.url}/logs`);
    const row = page.locator('table.logs-table tbody tr').filter({ has: page.locator('.badge.danger') });
    await row.waitFor();
    for (const label of ['Status', 'Gate', 'Model', 'Tokens', 'Cost', 'Latency', 'Time']) {
      const cell = row.locator(`td[data-label="${label}"]`);
      const shown = await cell.evaluate((td) => getComputedStyle(td, '::before').content);
      expect(shown).toBe(`"${label}"`);
      const { left, right } = await across(cell);
      expect(left).toBeGreaterThanOrEqual(0);
      expect(right, `${label} ends at ${right} px`).toBeLessThanOrEqual(PHONE.width);
    }
    const wrap = page.locator('.table-wrap').filter({ has: page.locator('table.logs-table') });
    expect(await wrap.evaluate((element) => element.scrollWidth <= element.clientWidth)).toBe(true);
  });

  it('keeps the top bar on one line at 1440 px, with no Menu button', async () => {
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
      expect(await page.getByRole('button', { name: 'Menu' }).isVisible()).toBe(false);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1440);
    } finally {
      await page.setViewportSize(PHONE);
    }
  });

  it('uses the dark theme when the browser prefers dark, and the light one otherwise', async () => {
    /** The relative luminance of the page's background (0 black, 1 white). */
    const background = () =>
      page.evaluate(() => {
        const [r, g, b] = (getComputedStyle(document.documentElement).backgroundColor.match(/\d+/g) ?? [])
          .slice(0, 3)
          .map((channel) => {
            const c = Number(channel) / 255;
            return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
          });
        return 0.2126 * (r ?? 0) + 0.7152 * (g ?? 0) + 0.0722 * (b ?? 0);
      });
    await page.goto(`${server.url}/`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    try {
      await page.emulateMedia({ colorScheme: 'dark' });
      expect(await background()).toBeLessThan(0.05);
      await page.screenshot({ path: path.join(artifacts, 'phone-overview-dark.png'), fullPage: true });
      await page.emulateMedia({ colorScheme: 'light' });
      expect(await background()).toBeGreaterThan(0.8);
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
    }
  });

  it('puts "Skip to content" first in the Tab order; it moves the focus to the page', async () => {
    await page.goto(`${server.url}/gates`);
    await page.getByRole('heading', { name: 'Gates', exact: true }).waitFor();
    await page.keyboard.press('Tab');
    const skip = page.getByRole('link', { name: 'Skip to content' });
    expect(await skip.evaluate((link) => link === document.activeElement)).toBe(true);
    const { left, right } = await across(skip);
    expect(left).toBeGreaterThanOrEqual(0);
    expect(right).toBeLessThanOrEqual(PHONE.width);
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('content');
    // The next Tab lands in the page, past the top bar.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.closest('header'))).toBeNull();
  });

  it('moves between the gate’s tabs with the arrow keys, Home and End; only the chosen tab takes Tab', async () => {
    await page.goto(`${server.url}/gates/${gateId}`);
    const tabs = page.getByRole('tablist', { name: 'Gate settings' }).getByRole('tab');
    await tabs.first().waitFor();
    const names = await tabs.allTextContents();
    const focused = () => page.evaluate(() => document.activeElement?.textContent ?? '');
    const selected = () => page.getByRole('tab', { selected: true }).textContent();
    expect(await tabs.evaluateAll((all) => all.filter((tab) => tab.tabIndex === 0).length)).toBe(1);

    await tabs.first().focus();
    await page.keyboard.press('ArrowRight');
    expect(await focused()).toBe(names[1]);
    expect(await selected()).toBe(names[1]);
    await expect.poll(() => new URL(page.url()).searchParams.get('tab')).not.toBeNull();
    await page.keyboard.press('End');
    expect(await focused()).toBe(names.at(-1));
    expect(await selected()).toBe(names.at(-1));
    await page.keyboard.press('ArrowRight');
    expect(await focused()).toBe(names[0]);
    await page.keyboard.press('ArrowLeft');
    expect(await focused()).toBe(names.at(-1));
    await page.keyboard.press('Home');
    expect(await focused()).toBe(names[0]);
    expect(await selected()).toBe(names[0]);
    expect(await tabs.evaluateAll((all) => all.filter((tab) => tab.tabIndex === 0).length)).toBe(1);
  });

  it('signs out from the menu, and fits the sign-in page', async () => {
    await page.goto(`${server.url}/settings`);
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/sign-in');
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await fitsThePhone('sign-in');
  });
});
