import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Client, fetchExchange, Provider } from 'urql';
import { describe, expect, it, vi } from 'vitest';
import { Route, Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { GatePage } from './GatePage.tsx';
import { storedGate } from './storedGate.testing.ts';
import { WORST_CASE_DEBOUNCE_MS } from './useRequestWorstCase.ts';

const GATE_ID = storedGate().id;

const models = [
  { __typename: 'Model', id: 'mock/echo', name: 'Mock echo', provider: 'mock', deprecated: false },
  { __typename: 'Model', id: 'mock/fast', name: 'Mock fast', provider: 'mock', deprecated: false },
];

type Variables = Record<string, unknown>;
type UpdateOutcome = Record<string, unknown>;

/**
 * The GraphQL server as a test double behind urql's real client: answers each operation by its
 * name, and records what the page sent. `update` decides the updateGate outcome.
 */
function fakeGraphQL(
  gate: ReturnType<typeof storedGate>,
  update: (input: Variables) => UpdateOutcome,
  deliveries: unknown[] = [],
  worstCase: ((variables: Variables) => number | null) | null = null,
) {
  const sent: { operation: string; variables: Variables }[] = [];
  const fetch = vi.fn(async (_url: RequestInfo | URL, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body)) as { query: string; variables: Variables };
    const operation = /(?:query|mutation)\s+(\w+)/.exec(body.query)?.[1] ?? '';
    sent.push({ operation, variables: body.variables });
    const data =
      operation === 'GatePage'
        ? { gate }
        : operation === 'ModelsForTask'
          ? { models }
          : operation === 'UpdateGate'
            ? { updateGate: update(body.variables.input as Variables) }
            : operation === 'GateStats'
              ? {
                  gateStats: [
                    {
                      gateId: GATE_ID,
                      requests: 321,
                      errors: 12,
                      costUsd: 0.5,
                      p50LatencyMs: 250,
                      p95LatencyMs: 900,
                    },
                  ],
                }
              : operation === 'AlertDeliveries'
                ? { spendingAlertDeliveries: deliveries }
                : operation === 'RequestWorstCase' && worstCase
                  ? { requestWorstCase: worstCase(body.variables) }
                  : null;
    return new Response(JSON.stringify(data ? { data } : { errors: [{ message: `no ${operation} here` }] }), {
      headers: { 'content-type': 'application/json' },
    });
  });
  const inputs = () =>
    sent.filter((call) => call.operation === 'UpdateGate').map((call) => call.variables.input);
  return { fetch, inputs, sent };
}

const saved = (gate: ReturnType<typeof storedGate>) => (input: Variables) => ({
  __typename: 'MutationUpdateGateSuccess',
  data: { ...gate, ...input },
});

async function renderGatePage(graphql: ReturnType<typeof fakeGraphQL>, search = '') {
  const client = new Client({
    url: 'http://gatehouse.test/graphql',
    exchanges: [fetchExchange],
    fetch: graphql.fetch as typeof fetch,
    preferGetMethod: false,
  });
  const location = memoryLocation({ path: `/gates/${GATE_ID}${search}`, record: true });
  render(
    <Provider value={client}>
      <Router hook={location.hook} searchHook={location.searchHook}>
        <Route path="/gates/:id" component={GatePage} />
      </Router>
    </Provider>,
  );
  // The form shows once the gate is loaded, and the primary model once its task type's models are.
  await screen.findByRole('tablist', { name: 'Gate settings' });
  await waitFor(() =>
    expect(screen.getByLabelText<HTMLSelectElement>('Primary model').value).toBe('mock/echo'),
  );
  return location;
}

const tab = (name: string) => screen.getByRole('tab', { name: new RegExp(`^${name}`) });

describe('the gate page’s figures', () => {
  it('shows requests, errors, cost and p50/p95 over 24 hours, with a link to the gate’s logs', async () => {
    const graphql = fakeGraphQL(storedGate(), saved(storedGate()));
    await renderGatePage(graphql);
    const strip = await screen.findByRole('region', { name: 'Last 24 hours' });
    await waitFor(() => expect(strip.textContent).toContain('321'));
    expect(strip.textContent).toContain('Errors12');
    expect(strip.textContent).toContain('$0.50');
    expect(strip.textContent).toContain('250 ms / 900 ms');
    const link = screen.getByRole('link', { name: 'Its logs →' });
    expect(link.getAttribute('href')).toBe(`/logs?gateId=${GATE_ID}`);
    expect(graphql.sent.find((call) => call.operation === 'GateStats')?.variables.gateIds).toEqual([GATE_ID]);
  });
});

describe('the gate page form', () => {
  it('refuses a temperature of 3 on its field, shows its tab, and sends nothing', async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL(storedGate(), saved(storedGate()));
    const location = await renderGatePage(graphql, '?tab=request');

    const temperature = screen.getByLabelText('Temperature');
    await user.clear(temperature);
    await user.type(temperature, '3');
    await user.click(tab('Spending Limits'));
    await user.click(screen.getByRole('button', { name: 'Save changes' }));

    const error = await screen.findByText(/expected number to be <=2/);
    expect(error.id).toBe('temperature-error');
    expect(temperature.getAttribute('aria-invalid')).toBe('true');
    expect(tab('Request Config').getAttribute('aria-selected')).toBe('true');
    expect(location.history?.at(-1)).toBe(`/gates/${GATE_ID}?tab=request`);
    expect(graphql.inputs()).toEqual([]);
  });

  it('puts the server’s issues on their fields, and shows the tab of the first', async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL(storedGate(), () => ({
      __typename: 'ValidationError',
      message: 'Invalid gate settings',
      issues: [
        { path: 'spendingLimit', message: 'is more than this plan allows' },
        { path: 'fallbackModels.0', message: 'is not offered for chat gates' },
        { path: 'name', message: 'is reserved' },
        { path: '', message: 'try again later' },
      ],
    }));
    await renderGatePage(graphql);

    await user.click(tab('Models & Routing'));
    await user.click(screen.getByRole('button', { name: 'Add fallback model' }));
    await user.type(screen.getByLabelText('Fallback 1'), 'fast');
    await user.click(screen.getByRole('option', { name: /^mock\/fast/ }));
    await user.click(screen.getByRole('button', { name: 'Save changes' }));

    expect((await screen.findByText('Is more than this plan allows')).id).toBe('spendingLimit-error');
    expect(tab('Spending Limits').getAttribute('aria-selected')).toBe('true');
    await waitFor(() => expect(document.activeElement?.id).toBe('spendingLimit'));
    expect(screen.getByText('Is not offered for chat gates').id).toBe('fallbackModels.0-error');
    expect(screen.getByText('Is reserved').id).toBe('name-error');
    // An issue of no field goes above the form.
    expect(screen.getByText('try again later').className).toBe('banner error');
    // Each tab says how many of its fields need fixing.
    expect(tab('Basic Info').textContent).toContain('(1 to fix)');
    expect(tab('Models & Routing').textContent).toContain('(1 to fix)');
    expect(graphql.inputs()).toEqual([{ fallbackModels: ['mock/fast'] }]);
  });

  it.each([
    ['All four', false, true],
    ['None: the gate decides', true, false],
  ])('sends override permission “%s” as %s → %s', async (choice, stored, sent) => {
    const user = userEvent.setup();
    const gate = storedGate({ allowOverrides: stored });
    const graphql = fakeGraphQL(gate, saved(gate));
    await renderGatePage(graphql, '?tab=request');

    await user.click(screen.getByLabelText(choice));
    await user.click(screen.getByRole('button', { name: 'Save changes' }));

    await screen.findByText('Saved the change.');
    expect(graphql.inputs()).toEqual([{ allowOverrides: sent }]);
  });

  it('sends per-field override permissions as an object of the four fields', async () => {
    const user = userEvent.setup();
    const gate = storedGate({ allowOverrides: { model: true } });
    const graphql = fakeGraphQL(gate, saved(gate));
    await renderGatePage(graphql, '?tab=request');

    // The stored object shows as "only these", with its field ticked.
    expect(screen.getByLabelText<HTMLInputElement>('Only these').checked).toBe(true);
    expect(screen.getByLabelText<HTMLInputElement>('Override Model').checked).toBe(true);
    await user.click(screen.getByLabelText('Override Model'));
    await user.click(screen.getByLabelText('Override Temperature'));
    await user.click(screen.getByLabelText('Override Top P'));
    await user.click(screen.getByRole('button', { name: 'Save changes' }));

    await screen.findByText('Saved the change.');
    expect(graphql.inputs()).toEqual([
      { allowOverrides: { model: false, temperature: true, maxTokens: false, topP: true } },
    ]);
  });

  it('turns on the refusal of hosted tools on the Request Config tab, and sends only that', async () => {
    const user = userEvent.setup();
    const gate = storedGate();
    const graphql = fakeGraphQL(gate, saved(gate));
    await renderGatePage(graphql, '?tab=request');

    const toggle = screen.getByLabelText<HTMLInputElement>('Refuse hosted tools the model cannot run');
    expect(toggle.checked).toBe(false);
    await user.click(toggle);
    await user.click(screen.getByRole('button', { name: 'Save changes' }));

    await screen.findByText('Saved the change.');
    expect(graphql.inputs()).toEqual([{ strictHostedTools: true }]);
  });

  it('sends an emptied spending limit as null (no limit), and the enforcement chosen', async () => {
    const user = userEvent.setup();
    const gate = storedGate({ spendingLimit: 25 });
    const graphql = fakeGraphQL(gate, saved(gate));
    await renderGatePage(graphql, '?tab=spending');

    expect(screen.getByLabelText<HTMLInputElement>('Limit (USD)').value).toBe('25');
    await user.clear(screen.getByLabelText('Limit (USD)'));
    await user.selectOptions(screen.getByLabelText('Enforcement'), 'block');
    await user.click(screen.getByRole('button', { name: 'Save changes' }));

    await screen.findByText('Saved 2 changes.');
    expect(graphql.inputs()).toEqual([{ spendingLimit: null, spendingEnforcement: 'BLOCK' }]);
    // Saved: the form now starts from the stored gate, so nothing is left to send.
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    await screen.findByText('Nothing to save: no setting changed.');
    expect(graphql.inputs()).toHaveLength(1);
  });

  it('shows one request’s worst case beside the limit, warns while a block limit is below it, and lists the alerts sent', async () => {
    const user = userEvent.setup();
    const gate = storedGate({
      spendingLimit: 0.001,
      spendingEnforcement: 'BLOCK',
      requestWorstCaseUsd: 0.0042,
      spendingAlertWebhook: 'https://hooks.example.test/spending',
    });
    const delivery = {
      __typename: 'SpendingAlertDelivery',
      id: 'd-1',
      gateId: GATE_ID,
      gateName: 'Support bot',
      url: 'https://hooks.example.test/spending',
      status: 'DELIVERED',
      attempts: 2,
      lastStatus: 200,
      lastError: null,
      nextAttemptAt: null,
      deliveredAt: '2026-11-27T12:00:05.000Z',
      createdAt: '2026-11-27T12:00:00.000Z',
    };
    const graphql = fakeGraphQL(gate, saved(gate), [delivery]);
    await renderGatePage(graphql, '?tab=spending');

    expect(screen.getByText(/One request can cost up to/).textContent).toContain('0.0042');
    const warning = screen.getByRole('alert');
    expect(warning.textContent).toMatch(/below one request's worst case .*every request will be refused/);
    // Alert only lets every request through: no warning.
    await user.selectOptions(screen.getByLabelText('Enforcement'), 'alert_only');
    expect(screen.queryByText(/every request will be refused/)).toBeNull();
    await user.selectOptions(screen.getByLabelText('Enforcement'), 'block');
    expect(screen.getByText(/every request will be refused/)).toBeTruthy();
    // A limit above the worst case: no warning either.
    await user.clear(screen.getByLabelText('Limit (USD)'));
    await user.type(screen.getByLabelText('Limit (USD)'), '5');
    expect(screen.queryByText(/every request will be refused/)).toBeNull();

    const deliveries = await screen.findByRole('table');
    expect(within(deliveries).getByText('delivered')).toBeTruthy();
    expect(within(deliveries).getByText('2')).toBeTruthy();

    await user.clear(screen.getByLabelText('Alert webhook'));
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    await screen.findByText('Saved 2 changes.');
    expect(graphql.inputs()).toEqual([{ spendingLimit: 5, spendingAlertWebhook: null }]);
  }, 20_000);

  it('updates one request’s worst case as Max tokens is edited, before saving', async () => {
    const user = userEvent.setup();
    const gate = storedGate({
      spendingLimit: 0.001,
      spendingEnforcement: 'BLOCK',
      requestWorstCaseUsd: 0.0042,
    });
    // The server's answer for unsaved settings: $0.000001 per output token (4,200 when unset).
    const perToken = (variables: Variables) => ((variables.maxTokens as number | null) ?? 4200) * 0.000001;
    await renderGatePage(fakeGraphQL(gate, saved(gate), [], perToken), '?tab=request');

    await user.type(screen.getByLabelText('Max tokens'), '500');
    await user.click(tab('Spending Limits'));
    await waitFor(() =>
      expect(screen.getByText(/One request can cost up to/).textContent).toContain('$0.0005'),
    );
    // The limit now covers a request: no warning, though the saved gate's worst case is above it.
    expect(screen.queryByText(/every request will be refused/)).toBeNull();
  });

  it('updates one request’s worst case as the response format’s schema is edited, and keeps the saved one while it is not JSON', async () => {
    const user = userEvent.setup();
    // A saved figure the rule below cannot give for these settings, with the schema or without.
    const gate = storedGate({ requestWorstCaseUsd: 0.0099 });
    // The server's answer for unsaved settings: $0.000001 per output token (4,200 when unset) and
    // as much per byte of an enabled JSON schema.
    const rule = (variables: Variables) => {
      const schema =
        variables.responseFormatEnabled && variables.responseFormatType === 'JSON_SCHEMA'
          ? JSON.stringify(variables.responseFormatSchema ?? {}).length
          : 0;
      return (((variables.maxTokens as number | null) ?? 4200) + schema) * 0.000001;
    };
    const graphql = fakeGraphQL(gate, saved(gate), [], rule);
    await renderGatePage(graphql, '?tab=request');

    await user.click(screen.getByLabelText('Enable structured output'));
    await user.selectOptions(screen.getByLabelText('Response format'), 'json_schema');
    const schema = {
      type: 'object',
      properties: { answer: { type: 'string', description: 'x'.repeat(3000) } },
    };
    const text = JSON.stringify(schema);
    const asked = () => graphql.sent.filter((call) => call.operation === 'RequestWorstCase');
    // Asked once the format is chosen (no schema yet): what follows is about the schema alone.
    await waitFor(() =>
      expect(asked().some((call) => call.variables.responseFormatType === 'JSON_SCHEMA')).toBe(true),
    );
    const before = asked().length;
    // Half the schema, left long enough for the form to settle on it, then the rest.
    await user.click(screen.getByLabelText('JSON schema'));
    await user.paste(text.slice(0, 40));
    await new Promise((r) => setTimeout(r, WORST_CASE_DEBOUNCE_MS + 100));
    await user.paste(text.slice(40));
    await user.click(tab('Spending Limits'));
    // 4,200 output tokens and ~3,060 bytes of schema at the rule's price.
    await waitFor(() =>
      expect(screen.getByText(/One request can cost up to/).textContent).toContain('$0.00728'),
    );
    // Asked with the whole schema only: never with the half one, nor without it meanwhile.
    const since = asked().slice(before);
    expect(since.length).toBeGreaterThan(0);
    for (const call of since)
      expect(call.variables).toMatchObject({
        responseFormatEnabled: true,
        responseFormatType: 'JSON_SCHEMA',
        responseFormatSchema: schema,
      });

    // Not JSON again: the saved gate's figure, not one without the schema.
    await user.click(tab('Request'));
    await user.type(screen.getByLabelText('JSON schema'), '{{'); // one more "{"
    await user.click(tab('Spending Limits'));
    await waitFor(() =>
      expect(screen.getByText(/One request can cost up to/).textContent).toContain('$0.0099'),
    );
  });

  it('sends rate limits as whole numbers, a cleared one as null, and refuses 0 on its field', async () => {
    const user = userEvent.setup();
    const gate = storedGate({ rateLimitTpm: 90000 });
    const graphql = fakeGraphQL(gate, saved(gate));
    await renderGatePage(graphql, '?tab=spending');

    const rpm = screen.getByLabelText('Requests per minute');
    await user.type(rpm, '0');
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    expect((await screen.findByText('Must be at least 1 request per minute (null for no limit)')).id).toBe(
      'rateLimitRpm-error',
    );
    expect(graphql.inputs()).toEqual([]);

    await user.clear(rpm);
    await user.type(rpm, '600');
    await user.clear(screen.getByLabelText('Tokens per minute'));
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    await screen.findByText('Saved 2 changes.');
    expect(graphql.inputs()).toEqual([{ rateLimitRpm: 600, rateLimitTpm: null }]);
  });

  it('shows a JSON schema that does not parse as you type, and does not send it', async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL(storedGate(), saved(storedGate()));
    await renderGatePage(graphql, '?tab=request');

    const schema = screen.getByLabelText('JSON schema');
    await user.click(schema);
    await user.paste('{"type": "object",');
    expect((await screen.findByText(/^Is not valid JSON: /)).id).toBe('responseFormatSchema-error');
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(document.activeElement?.id).toBe('responseFormatSchema'));
    expect(graphql.inputs()).toEqual([]);
  });

  it('explains a suspended gate and jumps to its limit', async () => {
    const user = userEvent.setup();
    const gate = storedGate({
      spendingLimit: 10,
      spendingEnforcement: 'BLOCK',
      spendingCurrent: 10.5,
      spendingStatus: 'SUSPENDED',
    });
    const graphql = fakeGraphQL(gate, saved(gate));
    await renderGatePage(graphql);

    const alert = screen.getByRole('alert');
    expect(alert.textContent).toContain(
      'Suspended: this gate reached its monthly limit of $10.00 ($10.50 spent this month); requests get 402',
    );
    expect(alert.textContent).toContain('wait until the period resets on 1 Dec 2026, 00:00 UTC');
    await user.click(screen.getByRole('button', { name: 'Raise or remove the limit' }));
    expect(tab('Spending Limits').getAttribute('aria-selected')).toBe('true');
    await waitFor(() => expect(document.activeElement?.id).toBe('spendingLimit'));
  });

  it('shows an agent gate’s settings on Basic Info, orchestration once orchestrated, and saves them', async () => {
    const user = userEvent.setup();
    const gate = storedGate({ gateType: 'AGENT', agentMode: 'OBSERVABILITY', sessionIdleMinutes: 30 });
    const graphql = fakeGraphQL(gate, saved(gate));
    await renderGatePage(graphql);

    expect(screen.getByText('AGENT')).toBeTruthy();
    expect(tab('Sub-Gates')).toBeTruthy();
    expect(screen.queryByLabelText('Orchestration')).toBeNull();
    await user.selectOptions(screen.getByLabelText('Agent mode'), 'orchestrated');
    await user.selectOptions(screen.getByLabelText('Orchestration'), 'dynamic');
    await user.type(screen.getByLabelText('Session spending limit (USD)'), '2');
    await user.type(screen.getByLabelText('Visible tools'), 'search, read_file');
    await user.click(screen.getByRole('button', { name: 'Save changes' }));

    await screen.findByText('Saved 4 changes.');
    expect(graphql.inputs()).toEqual([
      {
        agentMode: 'ORCHESTRATED',
        orchestration: 'DYNAMIC',
        sessionSpendingLimit: 2,
        visibleTools: ['search', 'read_file'],
      },
    ]);
  });

  it('shows no agent settings on a standard gate', async () => {
    const graphql = fakeGraphQL(storedGate(), saved(storedGate()));
    await renderGatePage(graphql);
    expect(screen.getByText(/Gate type:/).textContent).toContain('standard');
    expect(screen.queryByLabelText('Agent mode')).toBeNull();
    expect(screen.queryByLabelText('Visible tools')).toBeNull();
    expect(screen.queryByRole('tab', { name: 'Sub-Gates' })).toBeNull();
  });
});
