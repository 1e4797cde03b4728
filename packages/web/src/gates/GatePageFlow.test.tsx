import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Client, fetchExchange, Provider } from 'urql';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Route, Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { guardedLocation } from '../ui/unsavedChanges.ts';
import { GatePage } from './GatePage.tsx';
import { storedGate } from './storedGate.testing.ts';

const GATE_ID = storedGate().id;

/** The GraphQL server as a test double: the gate, its task type's models, and a save that succeeds. */
function fakeGraphQL(gate: ReturnType<typeof storedGate>) {
  return vi.fn(async (_url: RequestInfo | URL, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body)) as { query: string; variables: Record<string, unknown> };
    const operation = /(?:query|mutation)\s+(\w+)/.exec(body.query)?.[1] ?? '';
    const data =
      operation === 'GatePage'
        ? { gate }
        : operation === 'ModelsForTask'
          ? {
              models: [
                {
                  __typename: 'Model',
                  id: 'mock/echo',
                  name: 'Mock echo',
                  provider: 'mock',
                  deprecated: false,
                },
              ],
            }
          : operation === 'UpdateGate'
            ? {
                updateGate: {
                  __typename: 'MutationUpdateGateSuccess',
                  data: { ...gate, ...(body.variables.input as object) },
                },
              }
            : null;
    return new Response(JSON.stringify(data ? { data } : { errors: [{ message: `no ${operation} here` }] }), {
      headers: { 'content-type': 'application/json' },
    });
  });
}

async function renderGatePage(search = '') {
  const client = new Client({
    url: 'http://gatehouse.test/graphql',
    exchanges: [fetchExchange],
    fetch: fakeGraphQL(storedGate()) as typeof fetch,
    preferGetMethod: false,
  });
  const location = memoryLocation({ path: `/gates/${GATE_ID}${search}`, record: true });
  render(
    <Provider value={client}>
      <Router hook={guardedLocation(location.hook)} searchHook={location.searchHook}>
        <Route path="/gates/:id" component={GatePage} />
      </Router>
    </Provider>,
  );
  await screen.findByRole('tablist', { name: 'Gate settings' });
  await waitFor(() =>
    expect(screen.getByLabelText<HTMLInputElement>('Primary model').value).toBe('mock/echo'),
  );
  return location;
}

const beforeUnloadPrevented = () => {
  const event = new Event('beforeunload', { cancelable: true });
  window.dispatchEvent(event);
  return event.defaultPrevented;
};

afterEach(() => {
  Reflect.deleteProperty(navigator, 'clipboard');
  Reflect.deleteProperty(window, 'confirm');
});

describe('a gate just created', () => {
  it('shows its id to copy and a ready request at this server, with the id filled in', async () => {
    const user = userEvent.setup();
    const writeText = vi.fn(async () => {});
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    await renderGatePage('?created=1');

    expect(screen.getByRole('status').textContent).toContain('Support bot is ready');
    expect(screen.getByLabelText<HTMLInputElement>('Gate id').value).toBe(GATE_ID);
    const curl = screen.getByRole('figure', { name: 'Example request with curl' }).textContent ?? '';
    expect(curl).toContain(`curl ${window.location.origin}/v3/chat`);
    expect(curl).toContain(`"gateId":"${GATE_ID}"`);
    const sdk = screen.getByRole('figure', { name: 'Example request with the OpenAI SDK' }).textContent ?? '';
    expect(sdk).toContain(`baseURL: '${window.location.origin}/v1'`);
    expect(sdk).toContain(`model: '${GATE_ID}'`);

    await user.click(screen.getByRole('button', { name: 'Copy id' }));
    expect(writeText).toHaveBeenCalledWith(GATE_ID);
    await screen.findByRole('button', { name: 'Copied' });
  });

  it('folds how to call it on a later visit', async () => {
    await renderGatePage();
    const details = screen.getByText('Call this gate').closest('details');
    expect(details?.open).toBe(false);
    expect(screen.queryByText(/is ready/)).toBeNull();
  });
});

describe('copying where the clipboard API is missing', () => {
  it('shows the text selected, ready for Ctrl+C', async () => {
    const user = userEvent.setup();
    // As on a page served over plain HTTP (not a secure context): no clipboard API at all.
    Object.defineProperty(navigator, 'clipboard', { value: undefined, configurable: true });
    await renderGatePage('?created=1');

    await user.click(screen.getByRole('button', { name: 'Copy curl command' }));
    const shown = await screen.findByLabelText<HTMLTextAreaElement>(/did not let the page copy/);
    expect(shown.value).toContain(`"gateId":"${GATE_ID}"`);
    await waitFor(() => expect(document.activeElement).toBe(shown));
    expect([shown.selectionStart, shown.selectionEnd]).toEqual([0, shown.value.length]);
  });

  it('does the same when the browser refuses the clipboard', async () => {
    const user = userEvent.setup();
    const writeText = vi.fn(async () => {
      throw new DOMException('Write permission denied.', 'NotAllowedError');
    });
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    await renderGatePage('?created=1');

    await user.click(screen.getByRole('button', { name: 'Copy id' }));
    expect(writeText).toHaveBeenCalled();
    const shown = await screen.findByLabelText<HTMLTextAreaElement>(/did not let the page copy/);
    expect(shown.value).toBe(GATE_ID);
    await waitFor(() => expect(document.activeElement).toBe(shown));
  });
});

describe('unsaved edits on the gate page', () => {
  it('ask before a link drops them, not before a change of tab, and the tab close asks too', async () => {
    const user = userEvent.setup();
    const confirm = vi.fn(() => false);
    window.confirm = confirm;
    const location = await renderGatePage();
    expect(beforeUnloadPrevented()).toBe(false);

    await user.type(screen.getByLabelText('Name'), ' v2');
    await waitFor(() => expect(beforeUnloadPrevented()).toBe(true));
    // Another tab of the same page keeps the edits: no question.
    await user.click(screen.getByRole('tab', { name: /^Request Config/ }));
    expect(confirm).not.toHaveBeenCalled();

    await user.click(screen.getByRole('link', { name: 'Gates' }));
    expect(confirm).toHaveBeenCalledTimes(1);
    expect(location.history?.at(-1)).toBe(`/gates/${GATE_ID}?tab=request`);

    // Saved, nothing is dropped: leaving asks nothing.
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    await screen.findByText('Saved the change.');
    await waitFor(() => expect(beforeUnloadPrevented()).toBe(false));
    await user.click(screen.getByRole('link', { name: 'Gates' }));
    expect(confirm).toHaveBeenCalledTimes(1);
    expect(location.history?.at(-1)).toBe('/gates');
  });
});
