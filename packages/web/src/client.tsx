import { CSRF_COOKIE, CSRF_HEADER } from '@gatehouse/rules/csrf';
import { createContext, type ReactNode, useCallback, useContext, useState } from 'react';
import { Client, cacheExchange, fetchExchange, Provider } from 'urql';

export function readCookie(name: string): string | undefined {
  for (const part of document.cookie.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return decodeURIComponent(value.join('='));
  }
  return undefined;
}

function createGatehouseClient(): Client {
  return new Client({
    url: '/graphql',
    exchanges: [cacheExchange, fetchExchange],
    preferGetMethod: false,
    // Read at request time: the token changes whenever someone signs in or out.
    fetchOptions: (): RequestInit => {
      const csrf = readCookie(CSRF_COOKIE);
      return csrf ? { headers: { [CSRF_HEADER]: csrf } } : {};
    },
  });
}

const StartOverContext = createContext<() => void>(() => {});

/**
 * Owns the one urql client. Signing in or out changes who is asking, so every cached answer
 * belongs to someone else: `useStartOver()` replaces the client, and its cache, with a new one.
 */
export function GraphQLProvider({ children }: { children: ReactNode }) {
  const [client, setClient] = useState(createGatehouseClient);
  const startOver = useCallback(() => setClient(createGatehouseClient()), []);
  return (
    <StartOverContext value={startOver}>
      <Provider value={client}>{children}</Provider>
    </StartOverContext>
  );
}

export function useStartOver(): () => void {
  return useContext(StartOverContext);
}
