import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, api, signUpInBrowser } from './support/account.ts';
import { expectNoAxeViolations } from './support/axe.ts';
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

  // The first account is the instance's admin, on the enterprise plan: no gate limit.
  const usage = (gates: number) => page.getByText(`${gates} gates · no gate limit on this plan`);

  it('shows the plan, its gates used, log retention, the account email, and the admin the accounts', async () => {
    account = await signUpInBrowser(page, server.url);
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.waitForURL((url) => url.pathname === '/settings');
    await usage(0).waitFor();

    expect(await page.getByRole('heading', { name: 'Enterprise' }).count()).toBe(1);
    expect(await page.getByText('365 days').first().textContent()).toContain('365 days');
    expect(await page.getByText(account.email, { exact: true }).count()).toBeGreaterThan(0);
    const accounts = page.getByRole('region', { name: 'Accounts' });
    await accounts.getByRole('cell', { name: account.email }).waitFor();
    expect(await page.getByLabel(`Plan of ${account.email}`).inputValue()).toBe('enterprise');
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
    await usage(3).waitFor();
    await page.screenshot({ path: path.join(artifacts, 'settings.png'), fullPage: true });
    await expectNoAxeViolations(page, 'settings');
  });

  it('asks before an unsaved default webhook is dropped by a link, and not once it is saved', async () => {
    const webhook = page.getByLabel('Default webhook');
    await webhook.click();
    await webhook.pressSequentially('https://hooks.example.test/spending');

    const asked = page.waitForEvent('dialog').then(async (dialog) => {
      const message = dialog.message();
      await dialog.dismiss();
      return message;
    });
    await page.getByRole('link', { name: 'Gates', exact: true }).click();
    expect(await asked).toBe('You have unsaved changes. Leave this page and drop them?');
    expect(new URL(page.url()).pathname).toBe('/settings');
    expect(await webhook.inputValue()).toBe('https://hooks.example.test/spending');

    // (Closing the tab's question is the same useUnsavedChanges, its beforeunload tested in
    // GatePageFlow.test.tsx. The Save click that once seemed unanswered here, taken for Chromium's
    // beforeunload, was the form remounting with the refetched settings and dropping its "Saved.",
    // sometimes before this looked: SpendingAlertsCard.test.tsx pins it now.)

    // Saved, nothing is dropped: the link leaves without a question.
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByText('Saved.').waitFor();
    let questions = 0;
    page.on('dialog', (unexpected) => {
      questions += 1;
      void unexpected.dismiss();
    });
    await page.getByRole('link', { name: 'Gates', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/gates');
    expect(questions).toBe(0);
  });
});
