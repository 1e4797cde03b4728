import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Client, fetchExchange, Provider } from 'urql';
import { describe, expect, it, vi } from 'vitest';
import { Route, Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { guardedLocation } from '../ui/unsavedChanges.ts';
import { CreateGatePage } from './CreateGatePage.tsx';

const NEW_ID = '3c9b1e7a-5d2f-4a8b-9c6d-0e1f2a3b4c5d';

const model = (id: string, extra: Record<string, unknown> = {}) => ({
  __typename: 'Model',
  id,
  name: id,
  provider: id.slice(0, id.indexOf('/')),
  deprecated: false,
  inputPricePerMTok: null,
  outputPricePerMTok: null,
  contextWindow: null,
  unitPrice: null,
  ...extra,
});

const MODELS: Record<string, unknown[]> = {
  CHAT: [
    model('mock/echo', { inputPricePerMTok: 1, outputPricePerMTok: 2, contextWindow: 128_000 }),
    model('mock/fast', { inputPricePerMTok: 0.5, outputPricePerMTok: 1, contextWindow: 128_000 }),
    model('openai/gpt-4o-mini', { inputPricePerMTok: 0.15, outputPricePerMTok: 0.6, contextWindow: 128_000 }),
    model('openai/gpt-4o', { inputPricePerMTok: 2.5, outputPricePerMTok: 10, contextWindow: 128_000 }),
    model('anthropic/claude-sonnet-4-5', {
      inputPricePerMTok: 3,
      outputPricePerMTok: 15,
      contextWindow: 200_000,
    }),
  ],
  IMAGE: [
    model('mock/image'),
    model('openai/dall-e-2', { unitPrice: { __typename: 'ModelUnitPrice', usd: 0.016, per: 'image' } }),
  ],
};

const PROVIDERS = [
  { __typename: 'Provider', id: 'openai', name: 'OpenAI', configured: false, envVariable: 'OPENAI_API_KEY' },
  {
    __typename: 'Provider',
    id: 'anthropic',
    name: 'Anthropic',
    configured: false,
    envVariable: 'ANTHROPIC_API_KEY',
  },
  { __typename: 'Provider', id: 'mock', name: 'Mock', configured: true, envVariable: null },
];

type Variables = Record<string, unknown>;

/**
 * The server's answer to requestWorstCase, as a stand-in rule: $0.000001 per output token on mock
 * models, ten times that when gpt-4o is among them; null for images. The figure's own rule is the
 * server's (tested there); this test is about the form asking as it changes and what it shows.
 */
function worstCase(variables: Variables): number | null {
  if (variables.taskType !== 'CHAT') return null;
  const models = [variables.model, ...((variables.fallbackModels as string[] | null) ?? [])];
  const perToken = models.includes('openai/gpt-4o') ? 0.00001 : 0.000001;
  return ((variables.maxTokens as number | null) ?? 4096) * perToken;
}

/** The GraphQL server as a test double behind urql's real client: models by task type, providers, createGate. */
function fakeGraphQL() {
  const sent: { operation: string; variables: Variables }[] = [];
  const fetch = vi.fn(async (_url: RequestInfo | URL, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body)) as { query: string; variables: Variables };
    const operation = /(?:query|mutation)\s+(\w+)/.exec(body.query)?.[1] ?? '';
    sent.push({ operation, variables: body.variables });
    const data =
      operation === 'ModelsForTask'
        ? { models: MODELS[String(body.variables.taskType)] ?? [] }
        : operation === 'Providers'
          ? { providers: PROVIDERS }
          : operation === 'RequestWorstCase'
            ? { requestWorstCase: worstCase(body.variables) }
            : operation === 'CreateGate'
              ? {
                  createGate: {
                    __typename: 'MutationCreateGateSuccess',
                    data: { __typename: 'Gate', id: NEW_ID, name: 'Support bot' },
                  },
                }
              : null;
    return new Response(JSON.stringify(data ? { data } : { errors: [{ message: `no ${operation} here` }] }), {
      headers: { 'content-type': 'application/json' },
    });
  });
  const created = () =>
    sent.filter((call) => call.operation === 'CreateGate').map((call) => call.variables.input);
  return { fetch, created, sent };
}

async function renderCreatePage(graphql = fakeGraphQL()) {
  const client = new Client({
    url: 'http://gatehouse.test/graphql',
    exchanges: [fetchExchange],
    fetch: graphql.fetch as typeof fetch,
    preferGetMethod: false,
  });
  const location = memoryLocation({ path: '/gates/new', record: true });
  render(
    <Provider value={client}>
      <Router hook={guardedLocation(location.hook)} searchHook={location.searchHook}>
        <Route path="/gates/new" component={CreateGatePage} />
      </Router>
    </Provider>,
  );
  const picker = await screen.findByRole('combobox', { name: 'Model' });
  await waitFor(() => expect(picker).not.toHaveProperty('disabled', true));
  return { graphql, location, picker };
}

describe('the model picker', () => {
  it('filters as you type, grouped by provider, each provider marked and each model priced', async () => {
    const user = userEvent.setup();
    const { picker } = await renderCreatePage();

    await user.click(picker);
    const list = screen.getByRole('listbox');
    expect(picker.getAttribute('aria-expanded')).toBe('true');
    expect(picker.getAttribute('aria-controls')).toBe(list.id);
    // Configured providers first; the others name the variable that would configure them.
    const groups = within(list).getAllByRole('group');
    const heading = (group: HTMLElement) =>
      document.getElementById(group.getAttribute('aria-labelledby') ?? '')?.textContent;
    expect(groups.map(heading)).toEqual([
      'Mock configured',
      'OpenAI not configured: set OPENAI_API_KEY',
      'Anthropic not configured: set ANTHROPIC_API_KEY',
    ]);
    expect(within(list).getAllByRole('option')).toHaveLength(5);

    await user.type(picker, 'gpt mini');
    const options = within(list).getAllByRole('option');
    expect(options.map((option) => option.textContent)).toEqual([
      'openai/gpt-4o-mini$0.15 in / $0.6 out per 1M tokens · 128,000 context',
    ]);
    expect(within(list).getAllByRole('group')).toHaveLength(1);

    await user.clear(picker);
    await user.type(picker, 'no such model');
    expect(within(list).queryAllByRole('option')).toHaveLength(0);
    expect(within(list).getByText(/No model of this task type matches/)).toBeTruthy();
  });

  it('is used with the keyboard: arrows move through the options, Enter chooses, Escape closes', async () => {
    const user = userEvent.setup();
    const { picker } = await renderCreatePage();

    picker.focus();
    await user.keyboard('claude');
    await user.keyboard('{ArrowDown}');
    const option = screen.getByRole('option', { name: /^anthropic\/claude-sonnet-4-5/ });
    expect(picker.getAttribute('aria-activedescendant')).toBe(option.id);
    expect(option.getAttribute('aria-selected')).toBe('true');
    await user.keyboard('{Enter}');
    expect((picker as HTMLInputElement).value).toBe('anthropic/claude-sonnet-4-5');
    expect(picker.getAttribute('aria-expanded')).toBe('false');
    // What was chosen is described beside it, with its provider's missing key.
    expect(
      screen.getByText(/\$3 in \/ \$15 out per 1M tokens · 200,000 context · Anthropic is not configured/),
    ).toBeTruthy();

    // Escape, twice, and leaving half-typed text keep the model chosen, and show it again.
    await user.keyboard('gpt');
    expect(picker.getAttribute('aria-expanded')).toBe('true');
    await user.keyboard('{Escape}');
    expect(picker.getAttribute('aria-expanded')).toBe('false');
    await user.keyboard('{Escape}');
    expect((picker as HTMLInputElement).value).toBe('anthropic/claude-sonnet-4-5');
    await user.clear(picker);
    await user.keyboard('moc');
    await user.tab();
    expect((picker as HTMLInputElement).value).toBe('anthropic/claude-sonnet-4-5');
  });

  it('offers the models of the task type, with their price per unit, for primary and fallbacks alike', async () => {
    const user = userEvent.setup();
    const { picker, graphql } = await renderCreatePage();

    await user.selectOptions(screen.getByLabelText('Task type'), 'image');
    await waitFor(() => expect(graphql.sent.some((call) => call.variables.taskType === 'IMAGE')).toBe(true));
    await user.click(picker);
    await waitFor(() => expect(within(screen.getByRole('listbox')).getAllByRole('option')).toHaveLength(2));
    expect(screen.getByRole('option', { name: /^openai\/dall-e-2/ }).textContent).toContain(
      '$0.016 per image',
    );
    await user.keyboard('{Escape}');

    await user.selectOptions(screen.getByLabelText('Routing strategy'), 'fallback');
    await user.click(screen.getByRole('button', { name: 'Add fallback model' }));
    const fallback = screen.getByRole('combobox', { name: 'Fallback 1' });
    await user.click(fallback);
    const options = within(screen.getByRole('listbox', { hidden: false })).getAllByRole('option');
    expect(options.map((option) => option.querySelector('.mono')?.textContent)).toEqual([
      'mock/image',
      'openai/dall-e-2',
    ]);
  });
});

describe('creating a gate', () => {
  it('warns, without refusing, when every model is on an unconfigured provider, then lands on the gate', async () => {
    const user = userEvent.setup();
    const { picker, graphql, location } = await renderCreatePage();

    await user.type(screen.getByLabelText('Name'), 'Support bot');
    await user.type(picker, 'gpt-4o-mini');
    await user.click(screen.getByRole('option', { name: /^openai\/gpt-4o-mini/ }));
    const warning = await screen.findByText(/None of this gate’s models is on a provider configured/);
    expect(warning.textContent).toContain('OpenAI');
    expect(warning.textContent).toContain('until OPENAI_API_KEY is set');

    // A mock fallback is configured: no warning.
    await user.selectOptions(screen.getByLabelText('Routing strategy'), 'fallback');
    await user.click(screen.getByRole('button', { name: 'Add fallback model' }));
    await user.type(screen.getByRole('combobox', { name: 'Fallback 1' }), 'echo');
    await user.click(screen.getByRole('option', { name: /^mock\/echo/ }));
    await waitFor(() => expect(screen.queryByText(/None of this gate’s models/)).toBeNull());
    await user.click(screen.getByRole('button', { name: 'Remove' }));
    await screen.findByText(/None of this gate’s models/);

    await user.click(screen.getByRole('button', { name: 'Create gate' }));
    await waitFor(() => expect(location.history?.at(-1)).toBe(`/gates/${NEW_ID}?created=1`));
    expect(graphql.created()).toMatchObject([{ name: 'Support bot', model: 'openai/gpt-4o-mini' }]);
  });

  it('asks before Cancel drops what was typed, and stays when told to', async () => {
    const user = userEvent.setup();
    const { location } = await renderCreatePage();
    // happy-dom has no window.confirm: the browser's question, answered "stay", then "leave".
    const confirm = vi.fn(() => false);
    window.confirm = confirm;

    await user.type(screen.getByLabelText('Name'), 'Half done');
    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(confirm).toHaveBeenCalledWith('You have unsaved changes. Leave this page and drop them?');
    expect(location.history?.at(-1)).toBe('/gates/new');

    confirm.mockReturnValue(true);
    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(location.history?.at(-1)).toBe('/gates');
  });
});

describe('one request’s worst case', () => {
  it('shows beside the limit what one request can cost for the models and max tokens chosen, and warns while a block limit is below it', async () => {
    const user = userEvent.setup();
    const { picker, graphql } = await renderCreatePage();
    // No model yet: nothing to price.
    expect(screen.queryByText(/One request can cost up to/)).toBeNull();

    await user.type(picker, 'echo');
    await user.click(screen.getByRole('option', { name: /^mock\/echo/ }));
    const figure = await screen.findByText(/One request can cost up to/);
    expect(figure.textContent).toContain('$0.0041');

    await user.type(screen.getByLabelText('Limit (USD)'), '0.002');
    expect(screen.queryByRole('alert')).toBeNull(); // alert only lets every request through
    await user.selectOptions(screen.getByLabelText('Enforcement'), 'block');
    expect(screen.getByRole('alert').textContent).toMatch(
      /This limit \(\$0\.002\) is below one request's worst case \(\$0\.0041\): every request will be refused/,
    );

    // A lower output cap: asked again with it, and the limit now covers a request.
    await user.type(screen.getByLabelText('Max tokens'), '1000');
    await waitFor(() =>
      expect(screen.getByText(/One request can cost up to/).textContent).toContain('$0.001'),
    );
    expect(screen.queryByText(/every request will be refused/)).toBeNull();
    expect(graphql.sent.filter((call) => call.operation === 'RequestWorstCase').at(-1)?.variables).toEqual({
      taskType: 'CHAT',
      model: 'mock/echo',
      fallbackModels: [],
      maxTokens: 1000,
      systemPrompt: null,
      responseFormatEnabled: false,
      responseFormatType: 'TEXT',
      responseFormatSchema: null,
    });

    // A dearer fallback raises it above the limit again.
    await user.selectOptions(screen.getByLabelText('Routing strategy'), 'fallback');
    await user.click(screen.getByRole('button', { name: 'Add fallback model' }));
    await user.type(screen.getByRole('combobox', { name: 'Fallback 1' }), 'gpt-4o');
    await user.click(screen.getByRole('option', { name: /^openai\/gpt-4o(?!-)/ }));
    await waitFor(() =>
      expect(screen.getByText(/One request can cost up to/).textContent).toContain('$0.01'),
    );
    expect(screen.getByRole('alert').textContent).toMatch(/every request will be refused with HTTP 402/);
  }, 20_000);

  it('shows no figure for a task type priced by its input', async () => {
    const user = userEvent.setup();
    const { graphql } = await renderCreatePage();
    await user.selectOptions(screen.getByLabelText('Task type'), 'image');
    const picker = screen.getByRole('combobox', { name: 'Model' });
    await user.type(picker, 'dall');
    await user.click(screen.getByRole('option', { name: /^openai\/dall-e-2/ }));
    await waitFor(() =>
      expect(
        graphql.sent.some(
          (call) => call.operation === 'RequestWorstCase' && call.variables.taskType === 'IMAGE',
        ),
      ).toBe(true),
    );
    expect(screen.queryByText(/One request can cost up to/)).toBeNull();
  });
});
