import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, api, signUpInBrowser } from './support/account.ts';
import { expectNoAxeViolations } from './support/axe.ts';
import { launchBrowser, type RunningBrowser } from './support/browser.ts';
import { type RunningServer, startServer } from './support/server.ts';

const artifacts = path.join(import.meta.dirname, 'artifacts');

/** The API keys page in order: the steps share this page, this account and this server. */
describe('the API keys page', () => {
  let server: RunningServer;
  let browser: RunningBrowser;
  let page: Page;
  let account: Account;
  let newKey = '';

  beforeAll(async () => {
    await mkdir(artifacts, { recursive: true });
    server = await startServer();
    browser = await launchBrowser();
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    page = await browser.context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const gatesWith = async (key: string) =>
    (await fetch(`${server.url}/v1/gates`, { headers: { authorization: `Bearer ${key}` } })).status;

  it('lists the key made at sign-up, reached from the navigation', async () => {
    account = await signUpInBrowser(page, server.url);
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.waitForURL((url) => url.pathname === '/api-keys');
    const rows = page.getByRole('row').filter({ has: page.getByRole('cell') });
    await rows.first().waitFor();
    expect(await rows.count()).toBe(1);
    const cells = await rows.first().getByRole('cell').allTextContents();
    expect(cells[1]).toBe(`${account.apiKey.slice(0, 11)}…`);
    expect(cells[4]).toBe('active');
  });

  it('refuses a key without a name, on the name field', async () => {
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.locator('#apiKeyName-error').waitFor();
    expect(await page.locator('#apiKeyName-error').textContent()).toBe('must not be empty');
  });

  it('creates a key, shows it once with a copy button, and the key works', async () => {
    await page.getByLabel('New key name').fill('CI runner');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { name: /you will not see it again/ }).waitFor();
    newKey = await page.locator('#api-key').inputValue();
    expect(newKey).toMatch(/^gh_/);
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByRole('button', { name: 'Copied', exact: true }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(newKey);
    await page.screenshot({ path: path.join(artifacts, 'api-key-created.png'), fullPage: true });
    await expectNoAxeViolations(page, 'api key created');

    expect(await gatesWith(newKey)).toBe(200);
    await page.getByRole('button', { name: 'I have copied the key' }).click();
    // Once dismissed, the secret is gone from the page for good.
    expect(await page.locator('#api-key').count()).toBe(0);
    const row = page.getByRole('row').filter({ hasText: 'CI runner' });
    await row.waitFor();
    expect(await row.getByRole('cell').nth(1).textContent()).toBe(`${newKey.slice(0, 11)}…`);
    await page.reload();
    await row.waitFor();
    expect(await row.getByRole('cell').nth(3).textContent()).toMatch(/UTC$/);
  });

  it('limits a key to a task type and a spending limit; a chat request with it gets 403 key_scope', async () => {
    const gate = await api(server.url, account.apiKey)('POST', '/v1/gates', {
      name: 'support-bot',
      taskType: 'chat',
      model: 'mock/echo',
    });
    expect(gate.status).toBe(201);
    await page.reload();
    const row = page.getByRole('row').filter({ hasText: 'CI runner' });
    await row
      .getByRole('button', { name: 'Settings of CI runner: spending limit, scope and expiry' })
      .click();
    const form = page.getByRole('form', { name: 'Settings of CI runner' });
    await form.getByLabel('Spending limit (USD)').fill('5');
    await form.getByLabel('embeddings', { exact: true }).check();
    await page.screenshot({ path: path.join(artifacts, 'api-key-settings.png'), fullPage: true });
    await expectNoAxeViolations(page, 'api key settings');
    await form.getByRole('button', { name: 'Save settings' }).click();
    await form.waitFor({ state: 'detached' });
    await row.getByRole('cell', { name: '$0.00 of $5.00 this month' }).waitFor();
    await row.getByRole('cell', { name: 'All gates · embeddings' }).waitFor();
    const chat = await api(server.url, newKey)('POST', '/v3/chat', {
      gateId: gate.body.id,
      data: { messages: [{ role: 'user', content: 'hello' }] },
    });
    expect(chat.status).toBe(403);
    expect(chat.body.error.code).toBe('key_scope');
  });

  it('rolls a key with an hour of grace: the new secret works, and the old one still does', async () => {
    const row = page.getByRole('row').filter({ hasText: 'CI runner' });
    await row.getByRole('button', { name: 'Roll CI runner' }).click();
    const form = page.getByRole('form', { name: 'Roll CI runner' });
    await form.getByLabel('Keep the current secret working for').selectOption({ label: '1 hour' });
    await form.getByRole('button', { name: 'Roll key' }).click();
    await page.getByRole('heading', { name: /you will not see it again/ }).waitFor();
    const rolled = await page.locator('#api-key').inputValue();
    expect(rolled).toMatch(/^gh_/);
    expect(rolled).not.toBe(newKey);
    expect(await gatesWith(rolled)).toBe(200);
    expect(await gatesWith(newKey)).toBe(200);
    await page.getByRole('button', { name: 'I have copied the key' }).click();
    await row.getByText(/^old secret until/).waitFor();
    expect(await row.getByRole('cell').nth(1).textContent()).toBe(`${rolled.slice(0, 11)}…`);
    newKey = rolled;
  });

  it('asks before the navigation or Cancel drops unsaved limits; "stay" keeps them', async () => {
    const questions: string[] = [];
    /** Answers the page's next question, and notes what it asked. */
    const answerNext = (leave: boolean) =>
      page.once('dialog', async (dialog) => {
        questions.push(dialog.message());
        await (leave ? dialog.accept() : dialog.dismiss());
      });
    const row = page.getByRole('row').filter({ hasText: 'CI runner' });
    await row.getByRole('button', { name: 'Edit the rate limits of CI runner' }).click();
    const form = page.getByRole('form', { name: 'Rate limits of CI runner' });
    await form.getByLabel('Requests per minute').fill('30');

    answerNext(false);
    await page.getByRole('link', { name: 'Settings', exact: true }).click();
    await expect.poll(() => questions).toEqual(['You have unsaved changes. Leave this page and drop them?']);
    expect(new URL(page.url()).pathname).toBe('/api-keys');
    expect(await form.getByLabel('Requests per minute').inputValue()).toBe('30');

    answerNext(true);
    await form.getByRole('button', { name: 'Cancel' }).click();
    await form.waitFor({ state: 'detached' });
    expect(questions.at(-1)).toBe('You have unsaved changes. Drop them?');
    expect(await row.getByRole('cell', { name: 'No limit' }).count()).toBe(1);

    // Nothing left unsaved: the navigation asks nothing.
    await page.getByRole('link', { name: 'Settings', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/settings');
    expect(questions).toHaveLength(2);
    await page.getByRole('link', { name: 'API keys', exact: true }).click();
    await row.waitFor();
  });

  it('revokes a key after a confirmation, marks it revoked, and requests with it get 401', async () => {
    const row = page.getByRole('row').filter({ hasText: 'CI runner' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Revoke CI runner' });
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain('gets 401');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    expect(await gatesWith(newKey)).toBe(200);

    await row.getByRole('button', { name: 'Revoke' }).click();
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText('revoked', { exact: true }).waitFor();
    expect(await row.getByRole('button', { name: 'Revoke' }).count()).toBe(0);
    expect(await gatesWith(newKey)).toBe(401);
    // The other key is untouched.
    expect(await gatesWith(account.apiKey)).toBe(200);
    const chat = await api(server.url, newKey)('POST', '/v3/chat', { gateId: crypto.randomUUID(), data: {} });
    expect(chat.status).toBe(401);
    await page.screenshot({ path: path.join(artifacts, 'api-keys-revoked.png'), fullPage: true });
    await expectNoAxeViolations(page, 'api keys revoked');
  });
});
