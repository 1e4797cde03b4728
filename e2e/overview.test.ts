import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpInBrowser } from './support/account.ts';
import { expectNoAxeViolations } from './support/axe.ts';
import { launchBrowser, type RunningBrowser } from './support/browser.ts';
import { gatewayClient, type LoggedEntry, showsDollars } from './support/logsApi.ts';
import { type RunningServer, startServer } from './support/server.ts';

const artifacts = path.join(import.meta.dirname, 'artifacts');

/** The landing page: how to send a first request, then totals, charts and the latest requests. */
describe('the overview', () => {
  let server: RunningServer;
  let browser: RunningBrowser;
  let page: Page;
  let api: ReturnType<typeof gatewayClient>;
  let apiKey = '';
  let gateId = '';
  let logged: LoggedEntry[] = [];
  const email = `overview-${Date.now()}@example.com`;
  const password = 'correct horse battery';

  const screenshot = (name: string) =>
    page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });
  const totalOf = (term: string) =>
    page.locator('.total').filter({ has: page.getByText(term, { exact: true }) });
  const total = async (term: string) => (await totalOf(term).locator('.total-value').textContent()) ?? '';

  beforeAll(async () => {
    await mkdir(artifacts, { recursive: true });
    server = await startServer();
    browser = await launchBrowser();
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    page = await browser.context.newPage();
    ({ apiKey } = await signUpInBrowser(page, server.url, { email, password }));
    api = gatewayClient(server.url, apiKey);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('shows, before any request, a curl command that works once a gate exists', async () => {
    await page.goto(server.url);
    await page.getByRole('heading', { name: 'No requests yet: send one with curl' }).waitFor();
    await page.getByRole('link', { name: 'create a gate' }).waitFor();

    gateId = await api.createGate({ name: 'Support bot', model: 'mock/echo' });
    await page.reload();
    const example = page.getByLabel('Example request');
    await example.waitFor();
    const command = (await example.locator('pre').textContent()) ?? '';
    expect(command).toContain(`${server.url}/v3/chat`);
    expect(command).toContain(gateId);

    await page.getByRole('button', { name: 'Copy command' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(command);
    await screenshot('overview-empty');
    await expectNoAxeViolations(page, 'overview empty');

    // The body in the command is one the gateway accepts.
    const body = JSON.parse(/-d '(.*)'$/m.exec(command)?.[1] ?? 'null') as {
      gateId: string;
      data: { messages: { content: string }[] };
    };
    const first = await api.chat(body.gateId, body.data.messages[0]?.content ?? '');
    expect(first.status).toBe(200);
  });

  it('counts requests, failures, cost, latency and active gates', async () => {
    const other = await api.createGate({ name: 'Other bot', model: 'mock/fast' });
    for (const delay of [20, 40, 60])
      expect((await api.chat(gateId, `hello [mock:delay=${delay}]`)).status).toBe(200);
    expect((await api.chat(other, 'boom [mock:fail=500]')).status).toBeGreaterThanOrEqual(500);
    logged = await api.logsWhenWritten(5);

    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.locator('.totals').waitFor();
    await page.waitForFunction(() => document.querySelector('.total-value')?.textContent === '5');
    expect(await total('Requests')).toBe('5');
    expect(await total('Failed')).toBe('1');
    expect(await totalOf('Failed').textContent()).toContain('20.0% of requests');
    const cost = logged.reduce((sum, entry) => sum + entry.cost_usd, 0);
    const shown = await total('Cost');
    expect(showsDollars(shown, cost), `${shown} for ${cost}`).toBe(true);
    const latency = Math.round(logged.reduce((sum, entry) => sum + entry.latency_ms, 0) / logged.length);
    expect(await total('Avg latency')).toBe(`${latency} ms`);
    expect(await total('Active gates')).toBe('2');
  });

  it('charts requests and errors, cost and latency, hour by hour', async () => {
    for (const title of ['Requests', 'Cost (USD)', 'Latency']) {
      await page.getByRole('figure', { name: title }).locator('svg.recharts-surface').first().waitFor();
    }
    const requests = page.getByRole('figure', { name: 'Requests' });
    // The hour with the requests has a bar for its successes and one for its failure.
    await requests.locator('.recharts-bar-rectangle path').first().waitFor();
    expect(await requests.locator('.recharts-bar-rectangle path').count()).toBe(2);
    expect(await requests.locator('.recharts-legend-item').allTextContents()).toEqual([
      'Succeeded',
      'Failed',
    ]);
    const latency = page.getByRole('figure', { name: 'Latency' });
    expect(await latency.locator('.recharts-line').count()).toBe(2);
    await screenshot('overview-totals');
    await expectNoAxeViolations(page, 'overview totals');
  });

  it('lists the recent requests, each linking to its log entry', async () => {
    const recent = page.locator('table.logs-table tbody tr');
    expect(await recent.count()).toBe(5);
    const failed = logged.find((entry) => !entry.success) as LoggedEntry;
    await page.locator(`tr[data-entry-id="${failed.id}"] a.entry-link`).click();
    await page.waitForURL((url) => url.pathname === '/logs' && url.searchParams.get('entry') === failed.id);
    const error = page.getByRole('complementary', { name: 'Log entry' }).getByRole('note', { name: 'Error' });
    await error.waitFor();
    expect(await error.textContent()).toContain('mock failure 500');
  });

  it('keeps the chosen window in the address', async () => {
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.waitForURL((url) => url.pathname === '/');
    await page.getByRole('button', { name: 'Last 7 days' }).click();
    await page.waitForURL((url) => url.searchParams.get('window') === '7d');
    await page.reload();
    await page.locator('.totals').waitFor();
    expect(await page.getByRole('button', { name: 'Last 7 days' }).getAttribute('aria-pressed')).toBe('true');
    expect(await total('Requests')).toBe('5');
    // Days now: today's bar, and empty days before it.
    await page
      .getByRole('figure', { name: 'Requests' })
      .locator('.recharts-bar-rectangle path')
      .first()
      .waitFor();
    await screenshot('overview-7d');
  });

  it('is where signing in lands', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/sign-in');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === '/');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.locator('.totals').waitFor();
    await screenshot('overview-after-sign-in');
  });
});
