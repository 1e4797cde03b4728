import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, signUpInBrowser } from './support/account.ts';
import { launchBrowser, type RunningBrowser } from './support/browser.ts';
import { gatewayClient } from './support/logsApi.ts';
import { type RunningServer, startServer } from './support/server.ts';

/**
 * Entries that tell the truth, and Replay, in Chromium: the README's SDK example (`model: "gate"`)
 * and a sub-gate's answer show no override and no fallback; Replay opens Try it with the logged
 * request, sends it through the gate again, and the new entry links back to the first.
 */
describe('a log entry in the dashboard', () => {
  let server: RunningServer;
  let browser: RunningBrowser;
  let page: Page;
  let apiKey = '';
  let client: ReturnType<typeof gatewayClient>;

  const panel = () => page.getByRole('complementary', { name: 'Log entry' });
  const fact = (term: string) => panel().locator('.fact', { has: page.locator(`dt:text-is("${term}")`) });
  const factText = (term: string) => fact(term).locator('dd').textContent();
  /** Waits until the entry is written (the log writer batches), then opens it. */
  const openEntry = async (id: string) => {
    await written(id);
    await page.goto(`${server.url}/logs/${id}`);
    await fact('Model used').waitFor();
  };
  const written = async (id: string) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { status } = await api(server.url, apiKey)('GET', `/v1/logs/${id}`);
      if (status === 200) return;
      if (Date.now() > deadline) throw new Error(`entry ${id} was not written`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  beforeAll(async () => {
    server = await startServer();
    browser = await launchBrowser();
    page = await browser.context.newPage();
    ({ apiKey } = await signUpInBrowser(page, server.url, { email: `entries-${Date.now()}@example.com` }));
    client = gatewayClient(server.url, apiKey);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('shows the README’s SDK example and a sub-gate’s answer with no override and no fallback', async () => {
    const gateId = await client.createGate({ name: 'support-bot', model: 'mock/echo' });
    const sdk = new OpenAI({
      baseURL: `${server.url}/v1`,
      apiKey,
      defaultHeaders: { 'x-gatehouse-gate-id': gateId },
    });
    const { data: answer, response } = await sdk.chat.completions
      .create({ model: 'gate', messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse();
    expect(answer.choices[0]?.message.content).toBe('Echo: Hi');
    expect(response.headers.get('x-gatehouse-ignored-overrides')).toBeNull();
    await openEntry(response.headers.get('x-gatehouse-request-id') as string);
    await expect(factText('Model used')).resolves.toBe('mock/echo');
    expect(await panel().getByText('fallback', { exact: true }).count()).toBe(0);
    expect(await fact('Ignored overrides').count()).toBe(0);

    // An orchestrated agent gate answered by its sub-gate's model, named by the action.
    const agent = await client.createGate({
      name: 'agent',
      model: 'mock/echo',
      gateType: 'agent',
      agentMode: 'orchestrated',
      orchestration: 'static',
    });
    const writer = await client.createGate({ name: 'writer', model: 'mock/smart' });
    const call = api(server.url, apiKey);
    const attached = await call('POST', `/v1/gates/${agent}/sub-gates`, {
      subGateId: writer,
      role: 'writer',
      description: 'writes',
    });
    expect(attached.status).toBe(201);
    const sub = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        'x-gatehouse-gate-id': agent,
        'x-gatehouse-session-id': 'run-1',
        'x-gatehouse-action': 'writer',
      },
      body: JSON.stringify({ model: 'gate', messages: [{ role: 'user', content: 'write' }] }),
    });
    expect(sub.status).toBe(200);
    await openEntry(sub.headers.get('x-gatehouse-request-id') as string);
    await expect(factText('Model used')).resolves.toBe('mock/smart');
    expect(await panel().getByText('fallback', { exact: true }).count()).toBe(0);
    expect(await fact('Ignored overrides').count()).toBe(0);
  });

  it('replays an entry from Try it: a new entry with the same request, linked both ways', async () => {
    const gateId = await client.createGate({
      name: 'replayed',
      model: 'mock/echo',
      systemPrompt: 'Be brief.',
      allowOverrides: { temperature: true },
    });
    const first = await client.chat(gateId, {
      messages: [{ role: 'user', content: 'replay me' }],
      temperature: 0.4,
    });
    expect(first.status).toBe(200);
    const firstId = first.body.id as string;
    await openEntry(firstId);

    // The conversation as messages, the gate's system prompt first and the answer last.
    const conversation = panel().getByRole('region', { name: 'Conversation' });
    await expect(conversation.getByRole('listitem').count()).resolves.toBe(3);
    await conversation.getByText('Echo: replay me').waitFor();

    await panel().getByRole('link', { name: 'Replay', exact: true }).click();
    await page.waitForURL(`**/gates/${gateId}?tab=try&replay=${firstId}`);
    await page.getByRole('status').getByText('Replaying').waitFor();
    const tryIt = page.locator('section.try-it');
    await expect(tryIt.getByLabel('Temperature').inputValue()).resolves.toBe('0.4');
    await tryIt.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('link', { name: 'the replay’s log entry' }).waitFor();

    const replayHref = await page.getByRole('link', { name: 'the replay’s log entry' }).getAttribute('href');
    const replay = { id: String(replayHref).replace('/logs/', '') };
    expect(replay.id).not.toBe(firstId);
    await written(replay.id);
    const [original, replayed] = [await client.log(firstId), await client.log(replay.id)];
    expect((replayed as unknown as { replay_of: string }).replay_of).toBe(firstId);
    expect(replayed.provider_request).toEqual(original.provider_request);

    // The new entry says whose replay it is; the first lists it.
    await page.getByRole('link', { name: 'the replay’s log entry' }).click();
    await fact('Replay of').getByRole('link', { name: firstId }).waitFor();
    await fact('Replay of').getByRole('link', { name: firstId }).click();
    await fact('Replayed as').getByRole('link', { name: replay.id }).waitFor();
  });
});
