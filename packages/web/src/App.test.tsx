import { render, waitFor } from '@testing-library/react';
import { Client, fetchExchange, Provider } from 'urql';
import { describe, expect, it } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from './App.tsx';
import { storedGate } from './gates/storedGate.testing.ts';

const gate = storedGate();

/** The GraphQL server as a test double: a signed-in account and one gate; anything else fails. */
async function graphqlFetch(_url: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const body = JSON.parse(String(init?.body)) as { query: string };
  const operation = /(?:query|mutation)\s+(\w+)/.exec(body.query)?.[1] ?? '';
  const data =
    operation === 'Shell'
      ? { me: { __typename: 'Account', id: 'a1', email: 'me@example.com' }, signupOpen: false }
      : operation === 'GatePage'
        ? { gate }
        : operation === 'SignInPage'
          ? { signupOpen: false, me: null }
          : null;
  return new Response(JSON.stringify(data ? { data } : { errors: [{ message: `no ${operation} here` }] }), {
    headers: { 'content-type': 'application/json' },
  });
}

function renderAt(path: string) {
  const client = new Client({
    url: 'http://gatehouse.test/graphql',
    exchanges: [fetchExchange],
    fetch: graphqlFetch as typeof fetch,
    preferGetMethod: false,
  });
  const location = memoryLocation({ path });
  render(
    <Provider value={client}>
      <Router hook={location.hook} searchHook={location.searchHook}>
        <App />
      </Router>
    </Provider>,
  );
}

describe('the document title', () => {
  it.each([
    ['/', 'Overview · Gatehouse'],
    ['/gates', 'Gates · Gatehouse'],
    ['/gates/new', 'New gate · Gatehouse'],
    [`/gates/${gate.id}`, `${gate.name} · Gatehouse`],
    ['/logs', 'Logs · Gatehouse'],
    ['/api-keys', 'API keys · Gatehouse'],
    ['/settings', 'Settings · Gatehouse'],
    ['/nowhere', 'Page not found · Gatehouse'],
    ['/sign-in', 'Sign in · Gatehouse'],
  ])('names the page at %s: %s', async (path, title) => {
    document.title = 'Gatehouse';
    renderAt(path);
    await waitFor(() => expect(document.title).toBe(title));
  });
});
