import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Client, fetchExchange, Provider } from 'urql';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../App.tsx';
import { guardedLocation } from '../ui/unsavedChanges.ts';
import { safeReturnPath } from './returnTo.ts';

const newAccount = {
  signUp: {
    __typename: 'MutationSignUpSuccess',
    data: {
      __typename: 'SignUpPayload',
      session: { __typename: 'Session', user: { __typename: 'User', id: 'u1', email: 'me@example.com' } },
      apiKey: {
        __typename: 'CreatedApiKey',
        key: 'gh_first_secret',
        apiKey: { __typename: 'ApiKey', id: 'k1', name: 'Default', prefix: 'gh_first_s' },
      },
    },
  },
};

/**
 * The GraphQL server as a test double: nobody is signed in until SignIn or SignUp succeeds; then
 * the shell knows the account. Sign-up is closed unless `signupOpen`.
 */
function fakeServer(signupOpen: boolean) {
  let signedIn = false;
  return async (_url: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const body = JSON.parse(String(init?.body)) as { query: string };
    const operation = /(?:query|mutation)\s+(\w+)/.exec(body.query)?.[1] ?? '';
    const me = signedIn ? { __typename: 'User', id: 'u1', email: 'me@example.com' } : null;
    if (operation === 'SignIn' || operation === 'SignUp') signedIn = true;
    const data =
      operation === 'Shell' || operation === 'SignInPage' || operation === 'SignUpPage'
        ? { me, signupOpen, firstAccount: false }
        : operation === 'SignIn'
          ? {
              signIn: {
                __typename: 'MutationSignInSuccess',
                data: { __typename: 'SignInPayload', user: { __typename: 'User', id: 'u1' } },
              },
            }
          : operation === 'SignUp'
            ? newAccount
            : null;
    return new Response(JSON.stringify(data ? { data } : { errors: [{ message: `no ${operation} here` }] }), {
      headers: { 'content-type': 'application/json' },
    });
  };
}

function renderAt(path: string, { signupOpen = false } = {}) {
  const location = memoryLocation({ path, record: true });
  const fetch = fakeServer(signupOpen) as typeof globalThis.fetch;
  const client = new Client({
    url: 'http://gatehouse.test/graphql',
    exchanges: [fetchExchange],
    fetch,
    preferGetMethod: false,
  });
  render(
    <Provider value={client}>
      <Router hook={guardedLocation(location.hook)} searchHook={location.searchHook}>
        <App />
      </Router>
    </Provider>,
  );
  return location;
}

afterEach(() => {
  Reflect.deleteProperty(window, 'confirm');
});

describe('signing in from a deep link', () => {
  it('sends to sign in with the page asked for, and back to it once signed in', async () => {
    const user = userEvent.setup();
    const location = renderAt('/logs?gate=g1&status=failed');

    await screen.findByLabelText('Email');
    expect(location.history?.at(-1)).toBe(
      `/sign-in?next=${encodeURIComponent('/logs?gate=g1&status=failed')}`,
    );
    await user.type(screen.getByLabelText('Email'), 'me@example.com');
    await user.type(screen.getByLabelText('Password'), 'a long password');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));

    await waitFor(() => expect(location.history?.at(-1)).toBe('/logs?gate=g1&status=failed'));
  });

  it.each([
    ['//evil.example/phish'],
    ['https://evil.example/phish'],
    ['/\\evil.example'],
    ['javascript:alert(1)'],
  ])('goes to the overview, not to %s', async (next) => {
    const user = userEvent.setup();
    const location = renderAt(`/sign-in?next=${encodeURIComponent(next)}`);

    await user.type(await screen.findByLabelText('Email'), 'me@example.com');
    await user.type(screen.getByLabelText('Password'), 'a long password');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));

    await waitFor(() => expect(location.history?.at(-1)).toBe('/'));
  });
});

describe('signing up from a deep link', () => {
  it('sends to sign up with the page asked for, and there once the first key is copied', async () => {
    const user = userEvent.setup();
    const location = renderAt('/logs?gate=g1&status=failed', { signupOpen: true });
    const next = encodeURIComponent('/logs?gate=g1&status=failed');

    await screen.findByRole('heading', { name: 'Create your account' });
    expect(location.history?.at(-1)).toBe(`/sign-up?next=${next}`);
    // Signing in instead keeps the page asked for.
    expect(screen.getByRole('link', { name: 'Sign in' }).getAttribute('href')).toBe(`/sign-in?next=${next}`);
    await user.type(screen.getByLabelText('Email'), 'me@example.com');
    await user.type(screen.getByLabelText('Password'), 'a long password');
    await user.click(screen.getByRole('button', { name: 'Create account' }));

    await screen.findByRole('heading', { name: 'Your first API key' });
    await user.click(screen.getByRole('button', { name: 'Continue' }));
    await waitFor(() => expect(location.history?.at(-1)).toBe('/logs?gate=g1&status=failed'));
  });

  it('asks before the tab closes on the first key, and Continue leaves without asking', async () => {
    const user = userEvent.setup();
    // happy-dom has no window.confirm: the browser's question, answered "stay".
    const confirm = vi.fn(() => false);
    window.confirm = confirm;
    const location = renderAt('/sign-up', { signupOpen: true });
    const closing = () => {
      const event = new Event('beforeunload', { cancelable: true });
      window.dispatchEvent(event);
      return event.defaultPrevented;
    };

    await user.type(await screen.findByLabelText('Email'), 'me@example.com');
    await user.type(screen.getByLabelText('Password'), 'a long password');
    expect(closing()).toBe(false);
    await user.click(screen.getByRole('button', { name: 'Create account' }));
    await screen.findByDisplayValue('gh_first_secret');
    // The browser asks before a reload or a closed tab takes the key away.
    expect(closing()).toBe(true);

    await user.click(screen.getByRole('button', { name: 'Continue to gates' }));
    await waitFor(() => expect(location.history?.at(-1)).toBe('/gates'));
    expect(confirm).not.toHaveBeenCalled();
    expect(closing()).toBe(false);
  });

  it('offers sign-up from sign-in with the page asked for', async () => {
    renderAt(`/sign-in?next=${encodeURIComponent('/settings')}`, { signupOpen: true });
    const link = await screen.findByRole('link', { name: 'Create one' });
    expect(link.getAttribute('href')).toBe(`/sign-up?next=${encodeURIComponent('/settings')}`);
  });

  it.each([['//evil.example/phish'], ['https://evil.example/phish']])(
    'goes to the gates, not to %s',
    async (next) => {
      const user = userEvent.setup();
      const location = renderAt(`/sign-up?next=${encodeURIComponent(next)}`, { signupOpen: true });

      await user.type(await screen.findByLabelText('Email'), 'me@example.com');
      await user.type(screen.getByLabelText('Password'), 'a long password');
      await user.click(screen.getByRole('button', { name: 'Create account' }));
      await user.click(await screen.findByRole('button', { name: 'Continue to gates' }));

      await waitFor(() => expect(location.history?.at(-1)).toBe('/gates'));
    },
  );
});

describe('safeReturnPath', () => {
  const origin = 'https://gatehouse.example';
  it.each([
    ['/gates/abc?tab=routing', '/gates/abc?tab=routing'],
    ['/logs#entry', '/logs#entry'],
    [null, '/'],
    ['', '/'],
    ['gates', '/'],
    ['//evil.example', '/'],
    ['/\\evil.example', '/'],
    ['https://evil.example/', '/'],
    ['/sign-in?next=/x', '/'],
    ['/sign-up', '/'],
  ])('%s → %s', (next, expected) => {
    expect(safeReturnPath(next, origin)).toBe(expected);
  });
});
