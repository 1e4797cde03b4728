import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoAxeViolations } from './support/axe.ts';
import { launchBrowser, type RunningBrowser } from './support/browser.ts';
import { chooseModel, modelOption } from './support/modelPicker.ts';
import { type RunningServer, startServer } from './support/server.ts';

const artifacts = path.join(import.meta.dirname, 'artifacts');

/**
 * One first-run story in order, as an administrator lives it: each step starts where the last
 * one left the browser, so the steps share this page and this server.
 */
describe('the dashboard, first run', () => {
  let server: RunningServer;
  let browser: RunningBrowser;
  let page: Page;
  let apiKey = '';
  let gateId = '';
  const graphqlRequests: Request[] = [];
  const email = `admin-${Date.now()}@example.com`;
  const password = 'correct horse battery';

  beforeAll(async () => {
    await mkdir(artifacts, { recursive: true });
    server = await startServer();
    browser = await launchBrowser();
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    page = await browser.context.newPage();
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/graphql') graphqlRequests.push(request);
    });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const submitted = (operation: string) =>
    graphqlRequests.filter((request) => request.postDataJSON()?.query?.includes(`mutation ${operation}`));

  it('sends the first visitor to sign up, and shows the first API key once, with a copy button', async () => {
    // A link to the failed requests, followed before any account exists.
    await page.goto(`${server.url}/logs?status=failed`);
    await page.waitForURL((url) => url.pathname === '/sign-up');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/logs?status=failed');
    await page.getByRole('heading', { name: 'Create your account' }).waitFor();
    await expectNoAxeViolations(page, 'the sign-up page');

    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();

    await page.getByRole('heading', { name: 'Your first API key' }).waitFor();
    apiKey = await page.locator('#api-key').inputValue();
    expect(apiKey.length).toBeGreaterThan(20);
    await expectNoAxeViolations(page, 'the first API key');

    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(apiKey);
    await page.screenshot({ path: path.join(artifacts, 'first-api-key.png') });

    // The key shown is a working one.
    const response = await fetch(`${server.url}/v1/gates`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(response.status).toBe(200);
  });

  it('continues to the page first asked for, and from there to an empty gates list', async () => {
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/logs' && url.search === '?status=failed');
    await page.getByRole('link', { name: 'Gates', exact: true }).click();
    await page.waitForURL('**/gates');
    await page.getByRole('heading', { name: 'No gates yet' }).waitFor();
    await page.getByText(email).waitFor();
    await expectNoAxeViolations(page, 'the empty gates list');
  });

  it('catches a temperature above 2 in the browser, on the temperature field', async () => {
    await page.getByRole('link', { name: 'Create your first gate' }).click();
    await page.waitForURL('**/gates/new');

    await page.getByLabel('Name').fill('Support bot');
    await page.getByLabel('Task type').selectOption('chat');
    // The model list comes from the catalog for the chosen task type, searched as you type.
    await page.getByRole('combobox', { name: 'Model', exact: true }).fill('mock/');
    await modelOption(page, 'mock/echo').waitFor();
    expect(await modelOption(page, 'mock/embed').count()).toBe(0);
    // Mock needs no key; a provider without one names the variable it needs.
    expect(await page.getByRole('group', { name: /^Mock/ }).textContent()).toContain('configured');
    await page.getByRole('combobox', { name: 'Model', exact: true }).fill('gpt-4o-mini');
    expect(await page.getByRole('group', { name: /^OpenAI/ }).textContent()).toContain(
      'not configured: set OPENAI_API_KEY',
    );
    await chooseModel(page, 'Model', 'mock/echo');
    await page.getByLabel('Temperature').fill('3');
    await page.getByRole('button', { name: 'Create gate' }).click();

    const error = page.locator('#temperature-error');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/<=\s*2/);
    expect(await page.getByLabel('Temperature').getAttribute('aria-invalid')).toBe('true');
    expect(submitted('CreateGate')).toHaveLength(0);
    await expectNoAxeViolations(page, 'the create-gate form with an error');
    await page.screenshot({ path: path.join(artifacts, 'create-gate-client-error.png'), fullPage: true });
  });

  it('creates the gate once the value is fixed, lands on its page, copies its id, and lists it', async () => {
    await page.getByLabel('Temperature').fill('0.7');
    await page.getByLabel('Tags').fill('support, e2e');
    await page.getByRole('button', { name: 'Create gate' }).click();

    // Its page: the id to copy and a ready request at this server.
    await page.waitForURL(/\/gates\/[0-9a-f-]{36}\?created=1$/);
    gateId = new URL(page.url()).pathname.split('/')[2] ?? '';
    await page.getByText('Support bot is ready').waitFor();
    expect(await page.getByLabel('Gate id').inputValue()).toBe(gateId);
    const curl = await page.getByRole('figure', { name: 'Example request with curl' }).textContent();
    expect(curl).toContain(`curl ${server.url}/v3/chat`);
    expect(curl).toContain(`"gateId":"${gateId}"`);
    await page.getByRole('button', { name: 'Copy id' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(gateId);
    await page.screenshot({ path: path.join(artifacts, 'gate-created.png'), fullPage: true });

    await page.getByRole('link', { name: 'Gates', exact: true }).first().click();
    await page.waitForURL((url) => url.pathname === '/gates');
    const row = page.getByRole('row').filter({ hasText: 'Support bot' });
    await row.waitFor();
    const cells = await row.getByRole('cell').allTextContents();
    expect(cells[1]).toBe('chat');
    expect(cells[2]).toContain('mock/echo');
    expect(cells[3]).toBe('single');
    expect(cells[4]).toContain('active');
    // The figures' columns (requests, errors, cost, latency) sit before the tags: find them by label.
    const tags = await row.locator('td[data-label="Tags"]').textContent();
    expect(tags).toContain('support');
    expect(tags).toContain('e2e');

    // What the form saved is what the API serves.
    const response = await fetch(`${server.url}/v1/gates`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    const { gates } = (await response.json()) as { gates: unknown[] };
    expect(gates).toEqual([
      expect.objectContaining({
        name: 'Support bot',
        model: 'mock/echo',
        temperature: 0.7,
        tags: ['support', 'e2e'],
      }),
    ]);
  });

  it('puts the server’s conflict on a duplicate name on the name field', async () => {
    await page.getByRole('link', { name: 'Create gate' }).click();
    await page.waitForURL('**/gates/new');
    await page.getByLabel('Name').fill('Support bot');
    await chooseModel(page, 'Model', 'mock/echo');
    await page.getByRole('button', { name: 'Create gate' }).click();

    const error = page.locator('#name-error');
    await error.waitFor();
    expect(await error.textContent()).toBe('You have a gate with this name already');
    expect(submitted('CreateGate')).toHaveLength(2);
    expect(new URL(page.url()).pathname).toBe('/gates/new');
    await page.screenshot({ path: path.join(artifacts, 'create-gate-conflict.png'), fullPage: true });
  });

  it('offers only the models of the chosen task type, and drops a model of another', async () => {
    await page.getByLabel('Task type').selectOption('embeddings');
    // mock/echo is dropped once the embeddings models are known.
    await page.waitForFunction(
      () => (document.getElementById('model') as HTMLInputElement | null)?.value === '',
    );
    await page.getByRole('combobox', { name: 'Model', exact: true }).fill('mock/');
    await modelOption(page, 'mock/embed').waitFor();
    expect(await modelOption(page, 'mock/echo').count()).toBe(0);
    await page.keyboard.press('Escape');
    // Leaving drops what was typed: the app asks first.
    const asked = page.waitForEvent('dialog').then(async (dialog) => {
      const message = dialog.message();
      await dialog.accept();
      return message;
    });
    await page.getByRole('link', { name: 'Gates', exact: true }).first().click();
    expect(await asked).toBe('You have unsaved changes. Leave this page and drop them?');
    await page.waitForURL((url) => url.pathname === '/gates');
  });

  it('signs out, and back in, to the same gates', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/sign-in');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Invalid email or password').waitFor();
    await expectNoAxeViolations(page, 'the sign-in page with an error');

    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Signing in lands on the overview; the gates are one click away.
    await page.waitForURL((url) => url.pathname === '/');
    await page.getByRole('link', { name: 'Gates', exact: true }).click();
    await page.waitForURL('**/gates');
    await page.getByRole('row').filter({ hasText: 'Support bot' }).waitFor();
    await page.screenshot({ path: path.join(artifacts, 'gates-list.png'), fullPage: true });
    await expectNoAxeViolations(page, 'the gates list');
  });

  it('signs in from a deep link and lands on the page asked for, never on another site', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/sign-in');
    await page.goto(`${server.url}/gates/${gateId}?tab=routing`);
    await page.waitForURL((url) => url.pathname === '/sign-in');
    expect(new URL(page.url()).searchParams.get('next')).toBe(`/gates/${gateId}?tab=routing`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === `/gates/${gateId}` && url.search === '?tab=routing');
    await page.getByRole('tab', { name: /^Models & Routing/, selected: true }).waitFor();

    // Signed in, a `next` of another site goes to the overview.
    await page.goto(`${server.url}/sign-in?next=${encodeURIComponent('//example.com/phish')}`);
    await page.waitForURL((url) => url.origin === server.url && url.pathname === '/');
  });

  it('sent the CSRF token with every GraphQL request made while signed in', async () => {
    const cookies = await browser.context.cookies(server.url);
    expect(cookies.find((cookie) => cookie.name === 'gh_session')?.httpOnly).toBe(true);
    const csrf = cookies.find((cookie) => cookie.name === 'gh_csrf')?.value;
    expect(csrf).toBeTruthy();

    const operations = graphqlRequests.map((request) => String(request.postDataJSON()?.query ?? ''));
    const at = (operation: string) =>
      operations.findIndex((query) => query.includes(`mutation ${operation}`));
    const token = (request: Request) => request.headers()['x-csrf-token'];
    // First session: from the request after sign-up to the sign-out itself.
    const first = graphqlRequests.slice(at('SignUp') + 1, at('SignOut') + 1);
    // Second session: everything after the successful sign-in (the last SignIn).
    const secondStart = operations.findLastIndex((query) => query.includes('mutation SignIn'));
    const second = graphqlRequests.slice(secondStart + 1);
    expect(first.length).toBeGreaterThan(3);
    expect(second.length).toBeGreaterThan(0);
    expect(first.filter((request) => !token(request))).toEqual([]);
    expect(second.map(token)).toEqual(second.map(() => csrf));
  });
});
