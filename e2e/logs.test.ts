import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpInBrowser } from './support/account.ts';
import { expectNoAxeViolations } from './support/axe.ts';
import { launchBrowser, type RunningBrowser } from './support/browser.ts';
import { gatewayClient, type LoggedEntry, showsDollars } from './support/logsApi.ts';
import { type RunningServer, startServer } from './support/server.ts';

const artifacts = path.join(import.meta.dirname, 'artifacts');

/**
 * Requests sent through the API, then found in the dashboard's log: the table's columns, an
 * entry's error and attempts, filters and pages kept in the address across a reload.
 */
describe('the request log in the dashboard', () => {
  let server: RunningServer;
  let browser: RunningBrowser;
  let page: Page;
  let api: ReturnType<typeof gatewayClient>;
  let apiKey = '';
  const gates = { support: '', resilient: '' };
  let logged: LoggedEntry[] = [];
  let failed: LoggedEntry;
  let fellBack: LoggedEntry;

  // The entry panel is fixed to the window: with it open, the window is what a person sees.
  const screenshot = async (name: string) =>
    page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: (await panel().count()) === 0 });
  const rowOf = (id: string) => page.locator(`table.logs-table tbody tr[data-entry-id="${id}"]`);
  const panel = () => page.getByRole('complementary', { name: 'Log entry' });
  const search = () => new URL(page.url()).searchParams;
  /** Waits until the table lists exactly these entries, in this order, and is not loading. */
  const showsEntries = (ids: readonly string[]) =>
    page.waitForFunction((expected) => {
      const table = document.querySelector('table.logs-table');
      const shown = Array.from(table?.querySelectorAll('tbody tr') ?? [], (tr) =>
        tr.getAttribute('data-entry-id'),
      );
      return (
        table?.getAttribute('aria-busy') === 'false' && JSON.stringify(shown) === JSON.stringify(expected)
      );
    }, ids);
  const ids = (entries: readonly LoggedEntry[]) => entries.map((entry) => entry.id);

  beforeAll(async () => {
    await mkdir(artifacts, { recursive: true });
    server = await startServer();
    browser = await launchBrowser();
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    page = await browser.context.newPage();
    ({ apiKey } = await signUpInBrowser(page, server.url, { email: `logs-${Date.now()}@example.com` }));
    api = gatewayClient(server.url, apiKey);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('logs what the API answered: successes, a failure and a fallback', async () => {
    gates.support = await api.createGate({
      name: 'Support bot',
      model: 'mock/echo',
      routingStrategy: 'single',
    });
    gates.resilient = await api.createGate({
      name: 'Resilient bot',
      model: 'mock/echo',
      fallbackModels: ['mock/fast'],
      routingStrategy: 'fallback',
    });

    for (const [index, delay] of [30, 60, 90].entries()) {
      const ok = await api.chat(gates.support, `hello number ${index + 1} [mock:delay=${delay}]`);
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    }
    const boom = await api.chat(gates.support, 'boom [mock:fail=500]');
    expect(boom.status).toBeGreaterThanOrEqual(500);
    const hi = await api.chat(gates.resilient, 'hi [mock:fail=503@mock/echo]');
    expect(hi.status).toBe(200);
    expect(hi.body.model).toBe('mock/fast');

    logged = await api.logsWhenWritten(5);
    expect(logged).toHaveLength(5);
    failed = logged.find((entry) => !entry.success) as LoggedEntry;
    fellBack = logged.find((entry) => entry.model_used === 'mock/fast') as LoggedEntry;
    expect(failed.gate_name).toBe('Support bot');
    expect(fellBack.gate_name).toBe('Resilient bot');
  });

  it('shows every request in the table with its gate, model, tokens, cost and latency', async () => {
    await page.getByRole('link', { name: 'Logs', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/logs');
    // Newest first, as the API lists them.
    await showsEntries(ids(logged));
    expect(await page.locator('table.logs-table th').allTextContents()).toEqual([
      'Status',
      'Gate',
      'Model',
      'Tokens',
      'Cost',
      'Latency',
      'Time',
    ]);
    for (const entry of logged) {
      const cells = await rowOf(entry.id).getByRole('cell').allTextContents();
      expect(cells[0]).toBe(entry.success ? 'success' : `error ${entry.status_code}`);
      expect(cells[1]).toBe(entry.gate_name);
      expect(cells[2]).toContain(entry.model_used ?? entry.model_requested);
      expect(cells[3]).toBe(`${entry.prompt_tokens} + ${entry.completion_tokens}`);
      expect(showsDollars(cells[4] ?? '', entry.cost_usd), `${cells[4]} for ${entry.cost_usd}`).toBe(true);
      expect(cells[5]).toBe(`${entry.latency_ms} ms`);
    }
    const successes = logged.filter((entry) => entry.success && entry.gate_name === 'Support bot');
    for (const entry of successes) {
      expect(entry.prompt_tokens).toBeGreaterThan(0);
      expect(entry.cost_usd).toBeGreaterThan(0);
      expect(entry.latency_ms).toBeGreaterThanOrEqual(30);
    }
    await screenshot('logs-table');
    await expectNoAxeViolations(page, 'logs table');
  });

  it('opens the failed request with its error and its one attempt', async () => {
    await rowOf(failed.id).click();
    await page.waitForURL((url) => url.searchParams.get('entry') === failed.id);
    const entry = panel();
    await entry.getByRole('note', { name: 'Error' }).waitFor();
    const error = await entry.getByRole('note', { name: 'Error' }).textContent();
    expect(error).toContain(failed.error_code);
    expect(error).toContain(failed.error_message);
    expect(failed.error_message).toContain('mock failure 500');

    const attempts = await attemptRows(entry);
    expect(attempts).toEqual([
      [
        '1',
        'mock/echo',
        'mock',
        'failed 500',
        expect.stringContaining('mock failure 500'),
        // A provider's error status is not billed: its cost is nothing.
        expect.stringMatching(/^\$0(\.0+)?$/),
        expect.any(String),
      ],
    ]);
    expect(await rowOf(failed.id).getAttribute('class')).toContain('selected');
    await screenshot('logs-failed-entry');
    await expectNoAxeViolations(page, 'logs failed entry');
  });

  it('opens the fallback request with both attempts, and its payloads as copyable JSON', async () => {
    await rowOf(fellBack.id).click();
    await page.waitForURL((url) => url.searchParams.get('entry') === fellBack.id);
    const entry = panel();
    await entry.getByRole('region', { name: 'Attempts (2)' }).waitFor();
    const attempts = await attemptRows(entry);
    expect(attempts.map((cells) => cells.slice(0, 4))).toEqual([
      ['1', 'mock/echo', 'mock', 'failed 503'],
      ['2', 'mock/fast', 'mock', 'ok 200'],
    ]);
    const facts = await entry.locator('.fact').allTextContents();
    expect(facts).toContain('Model requestedmock/echo');
    expect(facts).toContain('Model usedmock/fastfallback');
    expect(facts.find((fact) => fact.startsWith('Tokens'))).toContain(
      `${fellBack.prompt_tokens} input + ${fellBack.completion_tokens} output`,
    );

    const detail = await api.log(fellBack.id);
    const response = entry.getByRole('region', { name: 'Response' });
    await response.getByText('"content"').first().waitFor();
    await response.getByRole('button', { name: 'Copy JSON' }).click();
    await response.getByRole('button', { name: 'Copied' }).waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(JSON.parse(copied)).toEqual(detail.provider_response);
    const request = entry.getByRole('region', { name: 'Request' });
    expect(await request.locator('.json-tree').textContent()).toContain('hi [mock:fail=503@mock/echo]');
    await screenshot('logs-fallback-entry');
    await expectNoAxeViolations(page, 'logs fallback entry');
  });

  it('filters by status, keeps the filter and the open entry across a reload', async () => {
    await page.getByLabel('Status').selectOption('failed');
    await page.waitForURL((url) => url.searchParams.get('status') === 'failed');
    await showsEntries([failed.id]);

    await rowOf(failed.id).click();
    await page.waitForURL((url) => url.searchParams.get('entry') === failed.id);
    expect(search().get('status')).toBe('failed');

    await page.reload();
    await showsEntries([failed.id]);
    expect(await page.getByLabel('Status').inputValue()).toBe('failed');
    expect(await rowOf(failed.id).getAttribute('class')).toContain('selected');
    await panel().getByRole('note', { name: 'Error' }).waitFor();
    expect(await panel().getByRole('note', { name: 'Error' }).textContent()).toContain(failed.error_message);
    await screenshot('logs-filtered-reloaded');
  });

  it('filters by gate and by time, and clears the filters', async () => {
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Gate').selectOption({ label: 'Resilient bot' });
    await page.waitForURL(
      (url) => url.searchParams.get('gateId') === gates.resilient && !url.searchParams.has('status'),
    );
    await showsEntries([fellBack.id]);

    // The last hour holds them all; a window that ended before they were sent holds none.
    await page.getByLabel('Gate').selectOption('');
    await page.getByLabel('Time').selectOption('1h');
    await page.waitForURL((url) => url.searchParams.get('range') === '1h');
    await showsEntries(ids(logged));
    await page.goto(`${server.url}/logs?until=2020-01-01T00:00:00.000Z`);
    await page.getByRole('heading', { name: 'No requests match these filters' }).waitFor();
    expect(await page.getByLabel('Time').inputValue()).toBe('custom');

    await page.getByRole('button', { name: 'Clear filters' }).first().click();
    await page.waitForURL((url) => url.pathname === '/logs' && url.search === '');
    await showsEntries(ids(logged));
  });

  it('pages through more than 50 entries with next and previous, and a reload keeps the page', async () => {
    const bulk = await api.createGate({ name: 'Bulk bot', model: 'mock/fast' });
    await Promise.all(Array.from({ length: 50 }, (_, n) => api.chat(bulk, `bulk ${n}`)));
    const all = await api.logsWhenWritten(55);

    await page.getByRole('button', { name: 'Refresh' }).click();
    await showsEntries(ids(all.slice(0, 50)));
    expect(await page.getByRole('button', { name: '← Previous' }).isDisabled()).toBe(true);

    await page.getByRole('button', { name: 'Next →' }).click();
    await page.waitForURL((url) => url.searchParams.has('after'));
    await showsEntries(ids(all.slice(50)));
    expect(await page.getByRole('button', { name: 'Next →' }).isDisabled()).toBe(true);
    await page.getByText('Page 2').waitFor();

    await page.reload();
    await showsEntries(ids(all.slice(50)));
    await page.getByText('Page 2').waitFor();
    await screenshot('logs-page-2');

    await page.getByRole('button', { name: '← Previous' }).click();
    await page.waitForURL((url) => !url.searchParams.has('after'));
    await showsEntries(ids(all.slice(0, 50)));
  });

  it('opens an entry from its own address, /logs/<id>', async () => {
    await page.goto(`${server.url}/logs/${failed.id}`);
    await page.waitForURL((url) => url.pathname === '/logs' && url.searchParams.get('entry') === failed.id);
    await panel().getByRole('note', { name: 'Error' }).waitFor();
    await page.keyboard.press('Escape');
    await page.waitForURL((url) => !url.searchParams.has('entry'));
    expect(await panel().count()).toBe(0);
    await screenshot('logs-closed-entry');
  });

  it('shows the tool call a model made, the tool result sent back, and an override the gate ignored', async () => {
    const weather = {
      type: 'function',
      function: {
        name: 'get_weather',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    };
    const ask = { role: 'user', content: 'Weather in Oslo? [mock:tool=get_weather]' };
    const first = await api.chat(gates.support, { messages: [ask], tools: [weather], temperature: 0.3 });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const calls = first.body.toolCalls as { id: string; function: { name: string; arguments: string } }[];
    expect(calls[0]?.function.name).toBe('get_weather');
    const second = await api.chat(gates.support, {
      messages: [
        ask,
        { role: 'assistant', content: null, tool_calls: calls },
        { role: 'tool', tool_call_id: calls[0]?.id, content: '{"temperature":21}' },
      ],
      tools: [weather],
    });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    const [answered, called] = await api.logsWhenWritten(57);

    await page.goto(`${server.url}/logs?entry=${called?.id}`);
    const callSection = panel().getByRole('region', { name: 'Tool calls (1)' });
    await callSection.waitFor();
    expect(await callSection.textContent()).toContain('get_weather');
    expect(await callSection.locator('.json-tree').textContent()).toContain(
      JSON.parse(calls[0]?.function.arguments ?? '{}').city,
    );
    const ignored = await panel().locator('.fact').filter({ hasText: 'Ignored overrides' }).textContent();
    expect(ignored).toContain('temperature');
    await screenshot('logs-tool-call');
    await expectNoAxeViolations(page, 'logs tool call');

    await rowOf(answered?.id ?? '').click();
    const resultSection = panel().getByRole('region', { name: 'Tool results (1)' });
    await resultSection.waitFor();
    expect(await resultSection.textContent()).toContain(calls[0]?.id);
    expect(await resultSection.locator('.json-tree').textContent()).toContain('"temperature": 21');
  });

  it('shows an image gate’s image in its entry: Download saves the bytes the API returned, Copy puts it on the clipboard', async () => {
    const gateId = await api.createGate({ name: 'Image gate', taskType: 'image', model: 'mock/image' });
    const res = await fetch(`${server.url}/v3/image`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ gateId, data: { prompt: 'a lighthouse at dusk' } }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as { id: string; images: { base64: string }[] };
    const returned = Buffer.from(answer.images[0]?.base64 ?? '', 'base64');
    expect(returned.length).toBeGreaterThan(100);

    await page.goto(`${server.url}/logs?entry=${answer.id}`);
    const image = panel().getByRole('img', { name: 'What the model answered (1 of 1)' });
    await image.waitFor();
    // The browser decoded it: an image with its real size, not a broken placeholder.
    expect(await image.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      panel().getByRole('button', { name: 'Download' }).first().click(),
    ]);
    const saved = await readFile((await download.path()) as string);
    expect(saved.equals(returned)).toBe(true);

    await panel().getByRole('button', { name: 'Copy image' }).first().click();
    await panel().getByRole('button', { name: 'Copied' }).first().waitFor();
    const clipboard = await page.evaluate(async () => {
      const [item] = await navigator.clipboard.read();
      const type = item?.types.find((t) => t.startsWith('image/'));
      return type && item ? { type, size: (await item.getType(type)).size } : null;
    });
    expect(clipboard?.type).toBe('image/png');
    expect(clipboard?.size).toBeGreaterThan(100);
    await screenshot('logs-image-entry');
    await expectNoAxeViolations(page, 'logs image entry');
  });
});

/** The cells of each row of the entry's attempts table. */
async function attemptRows(entry: Locator): Promise<string[][]> {
  const trs = entry.locator('table.attempts tbody tr');
  await trs.first().waitFor();
  return trs.evaluateAll((rows) =>
    rows.map((row) => Array.from(row.querySelectorAll('td'), (td) => td.textContent?.trim() ?? '')),
  );
}
