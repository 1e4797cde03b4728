import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Client, fetchExchange, Provider } from 'urql';
import { describe, expect, it, vi } from 'vitest';
import { Route, Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { GatePage } from './GatePage.tsx';
import { storedGate as baseGate } from './storedGate.testing.ts';

const GATE_ID = '3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';

/** The gate these tests analyse: a fallback gate on mock/smart with a cost cap. */
function storedGate(overrides: Record<string, unknown> = {}) {
  return baseGate({
    id: GATE_ID,
    name: 'Ticket triage',
    description: 'sort support tickets',
    tags: [],
    model: 'mock/smart',
    routingStrategy: 'FALLBACK',
    temperature: null,
    analysisMethod: 'COST',
    maxCostPer1kTokens: 0.001,
    ...overrides,
  });
}

const models = ['mock/echo', 'mock/fast', 'mock/smart'].map((id) => ({
  __typename: 'Model',
  id,
  name: id,
  provider: 'mock',
  deprecated: false,
}));

function score(model: string, figures: Record<string, unknown> = {}) {
  return {
    __typename: 'ModelScore',
    model,
    total: 0,
    cost: 0,
    latency: 0,
    quality: 0,
    reliability: 0.9604,
    excludedBecause: null,
    costPerUnit: 0.0005,
    costUnit: '1k tokens',
    costSource: 'catalog',
    latencyMs: 300,
    latencySource: 'catalog',
    qualityScore: 40,
    qualityKind: 'general',
    errorRate: null,
    samples: 0,
    ...figures,
  };
}

/** An analysis of the gate above: mock/fast first, mock/smart over the cost cap, `extraExcluded` more. */
function analysis(extraExcluded = 0) {
  return {
    __typename: 'TaskAnalysis',
    primary: 'mock/fast',
    alternatives: ['mock/echo'],
    fallbacks: ['mock/echo'],
    reasoning: 'Task: chat; read by the rules. Weights: cost 0.60, latency 0.15, quality 0.25.',
    readBy: 'rules',
    requiredCapabilities: [],
    windowSince: '2026-11-16T10:00:00.000Z',
    windowUntil: '2026-11-23T10:00:00.000Z',
    windowScope: 'gate',
    analysedAt: '2026-11-23T10:00:00.000Z',
    weights: { __typename: 'ArchitectWeights', cost: 0.6, latency: 0.15, quality: 0.25 },
    scores: [
      score('mock/fast', {
        total: 0.8731,
        cost: 1,
        latency: 1,
        quality: 0.5,
        costPerUnit: 0.00025,
        latencyMs: 180,
        latencySource: 'observed p95',
        errorRate: 0.1,
        samples: 40,
      }),
      score('mock/echo', { total: 0.4123, cost: 0.5, latency: 0.2, quality: 0 }),
      score('mock/smart', {
        excludedBecause: 'costs $0.0025 per 1k tokens, over the $0.001 cap',
        reliability: 0.9604,
      }),
      ...Array.from({ length: extraExcluded }, (_, i) =>
        score(`openai/model-${i}`, { excludedBecause: 'deprecated by its provider' }),
      ),
    ],
  };
}

type Variables = Record<string, unknown>;

/**
 * The GraphQL server as a test double behind urql's real client, answering each operation by its
 * name and recording what the page sent. `analysed` is the analysis analyseGate stores.
 */
function fakeGraphQL({
  gate = storedGate(),
  stored = analysis() as ReturnType<typeof analysis> | null,
  analyse = (): Record<string, unknown> => ({
    __typename: 'MutationAnalyseGateSuccess',
    data: {
      __typename: 'ArchitectAnalysis',
      gate: { __typename: 'Gate', id: GATE_ID, analysis: analysis() },
    },
  }),
  enhanced = 'Sorts support tickets by urgency. Task type: chat.',
} = {}) {
  let current = stored;
  const sent: { operation: string; variables: Variables }[] = [];
  const fetch = vi.fn(async (_url: RequestInfo | URL, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body)) as { query: string; variables: Variables };
    const operation = /(?:query|mutation)\s+(\w+)/.exec(body.query)?.[1] ?? '';
    sent.push({ operation, variables: body.variables });
    let data: unknown = null;
    if (operation === 'GatePage') data = { gate };
    else if (operation === 'ModelsForTask') data = { models };
    else if (operation === 'GateAnalysis')
      data = { gate: { __typename: 'Gate', id: GATE_ID, analysis: current } };
    else if (operation === 'AnalyseGate') {
      const outcome = analyse();
      if (outcome.__typename === 'MutationAnalyseGateSuccess') current = analysis();
      data = { analyseGate: outcome };
    } else if (operation === 'UpdateGate')
      data = {
        updateGate: {
          __typename: 'MutationUpdateGateSuccess',
          data: { ...gate, ...(body.variables.input as Variables) },
        },
      };
    else if (operation === 'SuggestDescription')
      data = {
        suggestModels: {
          __typename: 'MutationSuggestModelsSuccess',
          data: { __typename: 'ArchitectAnalysis', enhancedDescription: enhanced },
        },
      };
    return new Response(JSON.stringify(data ? { data } : { errors: [{ message: `no ${operation} here` }] }), {
      headers: { 'content-type': 'application/json' },
    });
  });
  const calls = (name: string) =>
    sent.filter((call) => call.operation === name).map((call) => call.variables);
  return { fetch, calls };
}

async function renderGatePage(graphql: ReturnType<typeof fakeGraphQL>, search: string) {
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
  await screen.findByRole('tablist', { name: 'Gate settings' });
  await waitFor(() =>
    expect(screen.getByLabelText<HTMLSelectElement>('Primary model').value).toBe('mock/smart'),
  );
}

const architect = () => screen.getByRole('region', { name: 'Architect’s recommendation' });
const row = (table: HTMLElement, model: string) => {
  const cell = within(table).getByText(model);
  return cell.closest('tr') as HTMLElement;
};

describe('the Architect on Models & Routing', () => {
  it('shows the scores with their facts and an excluded model with its reason; Apply saves the primary and fallbacks', async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL();
    await renderGatePage(graphql, '?tab=routing');

    const table = await within(architect()).findByRole('table', { name: 'Model scores' });
    const fast = row(table, 'mock/fast');
    expect(within(fast).getByText('recommended')).toBeTruthy();
    expect([...fast.querySelectorAll('td')].map((td) => td.textContent)).toEqual([
      'mock/fast recommended',
      '0.873',
      '1.000',
      '1.000',
      '0.500',
      '0.960',
      '$0.00025 per 1k tokens (catalog)',
      '180 ms (observed p95)',
      '40/100 (general)',
      '10% of 40 attempts',
    ]);
    expect(within(row(table, 'mock/echo')).getByText('fallback')).toBeTruthy();
    // Excluded models are not scored; each says why.
    expect(within(table).queryByText('mock/smart')).toBeNull();
    const excluded = within(architect()).getByRole('list', { name: 'Excluded models' });
    expect(excluded.textContent).toBe('mock/smart: costs $0.0025 per 1k tokens, over the $0.001 cap');
    expect(excluded.closest('details')?.open).toBe(true);
    expect(within(architect()).getByText(/Weights: cost 0.60/)).toBeTruthy();

    const changes = within(architect()).getByRole('list', { name: 'Changes Apply makes' });
    expect(changes.textContent).toContain('Primary model: mock/smart → mock/fast');
    expect(changes.textContent).toContain('Fallback models: none → mock/echo');
    await user.click(within(architect()).getByRole('button', { name: 'Apply' }));

    await screen.findByText('Saved 2 changes.');
    expect(graphql.calls('UpdateGate')).toEqual([
      { id: GATE_ID, input: { model: 'mock/fast', fallbackModels: ['mock/echo'] } },
    ]);
    expect(screen.getByLabelText<HTMLSelectElement>('Primary model').value).toBe('mock/fast');
    // Applied: the gate uses the recommendation, so there is nothing left to apply.
    expect(within(architect()).getByRole<HTMLButtonElement>('button', { name: 'Apply' }).disabled).toBe(true);
    expect(within(architect()).getByText(/already uses the recommended/)).toBeTruthy();
  });

  it('offers Analyse on a gate never analysed, and shows the analysis it stores', async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL({
      stored: null,
      analyse: () => ({
        __typename: 'MutationAnalyseGateSuccess',
        data: { __typename: 'ArchitectAnalysis', gate: { __typename: 'Gate', id: GATE_ID, analysis: null } },
      }),
    });
    await renderGatePage(graphql, '?tab=routing');

    await within(architect()).findByText(/Not analysed yet/);
    expect(within(architect()).queryByRole('table')).toBeNull();
    await user.click(within(architect()).getByRole('button', { name: 'Analyse' }));

    await within(architect()).findByRole('table', { name: 'Model scores' });
    expect(graphql.calls('AnalyseGate')).toEqual([{ id: GATE_ID }]);
    expect(within(architect()).getByRole('button', { name: 'Re-analyse' })).toBeTruthy();
  });

  it('collapses a long list of excluded models behind its count', async () => {
    const graphql = fakeGraphQL({ stored: analysis(30) });
    await renderGatePage(graphql, '?tab=routing');

    const summary = await within(architect()).findByText('31 models excluded');
    expect(summary.closest('details')?.open).toBe(false);
  });

  it('shows why an analysis failed, as the other tabs show errors', async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL({
      analyse: () => ({
        __typename: 'ValidationError',
        message: "costWeight: the gate's custom weights are all 0: give cost, latency or quality a weight",
        issues: [],
      }),
    });
    await renderGatePage(graphql, '?tab=routing');

    await user.click(await within(architect()).findByRole('button', { name: 'Re-analyse' }));
    expect((await within(architect()).findByRole('alert')).textContent).toContain(
      "the gate's custom weights are all 0",
    );
  });
});

describe('the Architect’s description on Basic Info', () => {
  it('shows the suggestion beside the description being edited, and Use this puts it in the form to save', async () => {
    const user = userEvent.setup();
    const graphql = fakeGraphQL();
    await renderGatePage(graphql, '?tab=basic');

    const description = screen.getByLabelText<HTMLTextAreaElement>('Description');
    await user.type(description, ' by urgency');
    await user.click(screen.getByRole('button', { name: 'Suggest a clearer description' }));

    const offer = await screen.findByRole('region', { name: 'Suggested description' });
    expect(within(offer).getByText('sort support tickets by urgency')).toBeTruthy();
    expect(within(offer).getByText('Sorts support tickets by urgency. Task type: chat.')).toBeTruthy();
    expect(graphql.calls('SuggestDescription')).toEqual([
      {
        input: {
          description: 'sort support tickets by urgency',
          taskType: 'CHAT',
          taskSubtype: null,
          enableDescriptionEnhancement: true,
        },
      },
    ]);
    await user.click(within(offer).getByRole('button', { name: 'Use this' }));
    expect(description.value).toBe('Sorts support tickets by urgency. Task type: chat.');
    expect(screen.queryByRole('region', { name: 'Suggested description' })).toBeNull();
    // Nothing is stored until the usual Save.
    expect(graphql.calls('UpdateGate')).toEqual([]);
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    await screen.findByText('Saved the change.');
    expect(graphql.calls('UpdateGate')).toEqual([
      { id: GATE_ID, input: { description: 'Sorts support tickets by urgency. Task type: chat.' } },
    ]);
  });
});
