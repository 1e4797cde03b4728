import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedLogs } from '../packages/server/scripts/seed-logs.ts';
import { connectDatabase } from '../packages/server/src/db/client.ts';
import { launchServer, type ServerProcess } from '../packages/server/test/support/process.ts';
import { launchBrowser, type RunningBrowser } from './support/browser.ts';
import { gatewayClient } from './support/logsApi.ts';

// Issue 29 asks for 200,000; E2E_LOG_SEARCH_ROWS makes a quicker run (the seeding is most of it).
const ROWS = Number(process.env.E2E_LOG_SEARCH_ROWS ?? 200_000);
const webDist = path.resolve(import.meta.dirname, '../packages/web/dist');

/**
 * Issue 29's acceptance: on a log of 200,000 seeded entries, one request is found in the dashboard
 * by its id, by a word of its prompt, and by model + error code; the time from the click to the
 * rows on screen is printed (not asserted); the CSV export of a filter has its rows and no other.
 */
describe(`log search over ${ROWS.toLocaleString('en')} entries`, () => {
  let dataDir = '';
  let server: ServerProcess;
  let browser: RunningBrowser;
  let page: Page;
  let api: ReturnType<typeof gatewayClient>;
  let owner: { email: string; password: string; apiKey: string };
  const needle = { found: '', failed: [] as string[] };

  const rowsShown = (ids: readonly string[]) =>
    page.waitForFunction(
      (expected) => {
        const table = document.querySelector('table.logs-table');
        const shown = Array.from(table?.querySelectorAll('tbody tr') ?? [], (tr) =>
          tr.getAttribute('data-entry-id'),
        );
        return (
          table?.getAttribute('aria-busy') === 'false' &&
          JSON.stringify([...shown].sort()) === JSON.stringify([...expected].sort())
        );
      },
      ids,
      { timeout: 60_000 },
    );

  /** Runs `act` (a click, an Enter), waits for `shown`, and prints the time between. */
  async function timed(label: string, act: () => Promise<void>, shown: () => Promise<unknown>) {
    const t = performance.now();
    await act();
    await shown();
    console.log(
      `log search, ${ROWS.toLocaleString('en')} entries: ${label}: ${(performance.now() - t).toFixed(0)} ms from click to rows`,
    );
  }

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-e2e-search-'));
    const db = await connectDatabase({ dataDir });
    try {
      const seed = await seedLogs(db, { rows: ROWS, gates: 10, days: 30, log: () => {} });
      console.log(`log search: seeded ${ROWS.toLocaleString('en')} entries in ${seed.seconds.toFixed(1)} s`);
      owner = seed.owner;
    } finally {
      await db.close();
    }
    server = await launchServer({
      from: 'built',
      dataDir,
      readyWithinMs: 60_000,
      env: { GATEHOUSE_OPEN_SIGNUP: '0', GATEHOUSE_WEB_DIST: webDist, GATEHOUSE_ARCHITECT_INTERVAL_MS: '0' },
    });
    api = gatewayClient(server.url, owner.apiKey);

    // The needles, sent through a gate as an application sends them.
    const gate = await api.createGate({ name: 'Needles', model: 'mock/fast', routingStrategy: 'single' });
    const ok = await api.chat(gate, 'Where does the quokka invoice go?');
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    for (const n of [1, 2]) {
      const failed = await api.chat(gate, `attempt ${n} [mock:fail=503]`);
      expect(failed.status).toBe(502);
    }
    const request = (p: string) =>
      fetch(`${server.url}${p}`, { headers: { authorization: `Bearer ${owner.apiKey}` } }).then(
        (r) => r.json() as Promise<{ logs: { id: string; success: boolean }[] }>,
      );
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { logs } = await request('/v1/logs?model=mock/fast');
      if (logs.length === 3) {
        needle.found = logs.find((l) => l.success)?.id ?? '';
        needle.failed = logs.filter((l) => !l.success).map((l) => l.id);
        break;
      }
      if (Date.now() > deadline) throw new Error(`only ${logs.length} of 3 entries were written`);
      await new Promise((r) => setTimeout(r, 100));
    }

    browser = await launchBrowser();
    page = await browser.context.newPage();
    await page.goto(`${server.url}/sign-in`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  }, 900_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('finds a request by its id, from the request-id box', async () => {
    await page.goto(`${server.url}/logs`);
    await page.locator('table.logs-table tbody tr').first().waitFor();
    // The unfiltered log is past the exact count: its summary says "about".
    await page.locator('.summary-line', { hasText: 'about' }).waitFor({ timeout: 60_000 });
    await page.getByLabel('Request id').fill(needle.found);
    const panel = page.getByRole('complementary', { name: 'Log entry' });
    await timed(
      'request id',
      () => page.getByRole('button', { name: 'Open', exact: true }).click(),
      // The entry's prompt, in the panel.
      () => panel.getByText('quokka').first().waitFor({ timeout: 60_000 }),
    );
    expect(new URL(page.url()).searchParams.get('entry')).toBe(needle.found);
  }, 180_000);

  it('finds it by a word of its prompt', async () => {
    await page.goto(`${server.url}/logs`);
    await page.getByLabel('Search prompts, answers and errors').fill('quokka');
    await timed(
      'a word of the prompt',
      () => page.getByRole('button', { name: 'Search', exact: true }).click(),
      () => rowsShown([needle.found]),
    );
    expect(new URL(page.url()).searchParams.get('q')).toBe('quokka');
    await page.getByText('1 request ·').waitFor();
  }, 180_000);

  it('finds the failures by model and error code, and exports exactly them as CSV', async () => {
    await page.goto(`${server.url}/logs`);
    await page.getByLabel('Model').fill('mock/fast');
    await page.getByLabel('Model').press('Enter');
    await rowsShown([needle.found, ...needle.failed]);
    await page.getByLabel('Error code').fill('upstream_error');
    await timed(
      'model + error code',
      () => page.getByLabel('Error code').press('Enter'),
      () => rowsShown(needle.failed),
    );
    const search = new URL(page.url()).searchParams;
    expect([search.get('model'), search.get('errorCode')]).toEqual(['mock/fast', 'upstream_error']);
    await page.getByText('2 requests ·').waitFor();

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^gatehouse-logs-.+\.csv$/);
    const csv = await readFile((await download.path()) as string, 'utf8');
    const lines = csv.trimEnd().split('\r\n');
    expect(lines[0]?.startsWith('id,created_at,')).toBe(true);
    const ids = lines.slice(1).map((line) => line.split(',')[0]);
    expect(ids.sort()).toEqual([...needle.failed].sort());
  }, 180_000);
});
