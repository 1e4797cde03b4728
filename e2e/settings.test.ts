import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, api, signUpInBrowser } from './support/account.ts';
import { launchBrowser, type RunningBrowser } from './support/browser.ts';
import { type RunningServer, startServer } from './support/server.ts';

const artifacts = path.join(import.meta.dirname, 'artifacts');

describe('the settings page', () => {
  let server: RunningServer;
  let browser: RunningBrowser;
  let page: Page;
  let account: Account;

  beforeAll(async () => {
    await mkdir(artifacts, { recursive: true });
    server = await startServer();
    browser = await launchBrowser();
    page = await browser.context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const usage = () => page.getByRole('progressbar', { name: 'Gates used' });

  it('shows the plan, its gates used against the limit, log retention and the account email', async () => {
    account = await signUpInBrowser(page, server.url);
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.waitForURL((url) => url.pathname === '/settings');
    await usage().waitFor();

    expect(await page.getByRole('heading', { name: 'Free' }).count()).toBe(1);
    expect(await usage().getAttribute('aria-valuenow')).toBe('0');
    expect(await usage().getAttribute('aria-valuemax')).toBe('10');
    expect(await page.getByText('0 of 10 used').count()).toBe(1);
    expect(await page.getByText('30 days').first().textContent()).toContain('30 days');
    expect(await page.getByText(account.email, { exact: true }).count()).toBeGreaterThan(0);
  });

  it('counts the gates made since, each time the page opens', async () => {
    const rest = api(server.url, account.apiKey);
    for (const name of ['First', 'Second', 'Third']) {
      expect((await rest('POST', '/v1/gates', { name, taskType: 'chat', model: 'mock/echo' })).status).toBe(
        201,
      );
    }
    await page.getByRole('link', { name: 'Gates', exact: true }).click();
    await page.getByRole('row').filter({ hasText: 'Third' }).waitFor();
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByText('3 of 10 used').waitFor();
    expect(await usage().getAttribute('aria-valuenow')).toBe('3');
    await page.screenshot({ path: path.join(artifacts, 'settings.png'), fullPage: true });
  });
});
