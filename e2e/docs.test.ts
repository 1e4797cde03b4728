/**
 * The API reference at /docs renders /openapi.json in Chromium with nothing but the server's own
 * origin: every request elsewhere is refused and recorded, and the page's Content-Security-Policy
 * (no inline script, no other origin) is broken by nothing it runs.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type RunningBrowser } from './support/browser.ts';
import { type RunningServer, startServer } from './support/server.ts';

describe('the API reference', () => {
  let server: RunningServer;
  let browser: RunningBrowser;
  let page: Page;
  const elsewhere: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    server = await startServer();
    browser = await launchBrowser();
    const origin = new URL(server.url).origin;
    await browser.context.route('**/*', (route) => {
      const url = route.request().url();
      if (new URL(url).origin === origin) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    page = await browser.context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('renders every part of the API from this server alone', async () => {
    const answer = await page.goto(`${server.url}/docs`);
    expect(answer?.status()).toBe(200);
    await page.getByRole('heading', { name: /Gatehouse/ }).waitFor();
    for (const tag of ['Gates', 'Logs', 'Native data plane', 'OpenAI-compatible', 'Anthropic-compatible']) {
      await page.getByRole('link', { name: tag, exact: true }).waitFor();
    }
    for (const path of ['/v1/chat/completions', '/v1/messages', '/v3/chat', '/v1/logs/{id}']) {
      await page.getByRole('link', { name: path, exact: true }).waitFor();
    }

    // An operation opens on its body's fields, taken from the schema its route validates with.
    await page.getByRole('button', { name: /POST \/v1\/gates Create a gate/ }).click();
    await page.getByText('routingStrategy').first().waitFor();
    expect(
      await page.getByText('Unknown and read-only fields are refused by name', { exact: false }).count(),
    ).toBe(1);

    expect(elsewhere, 'requests to another origin').toEqual([]);
    expect(problems, 'console errors (a CSP refusal is one)').toEqual([]);
  });
});
