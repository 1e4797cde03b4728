import type { ReactNode } from 'react';
import { useMutation, useQuery } from 'urql';
import { Link, Redirect, useLocation, useRoute, useSearch } from 'wouter';
import { useStartOver } from '../client.tsx';
import { graphql } from '../graphql.ts';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { leaveWithoutAsking, mayLeave } from '../ui/unsavedChanges.ts';
import { signInPath } from './returnTo.ts';

const ShellQuery = graphql(`
  query Shell {
    me {
      id
      email
    }
    signupOpen
  }
`);

const SignOutMutation = graphql(`
  mutation SignOut {
    signOut
  }
`);

/** The signed-in frame around every dashboard page; without a session it sends you to sign in. */
export function AppShell({ children }: { children: ReactNode }) {
  const [{ data, fetching, error }, refetch] = useQuery({ query: ShellQuery });
  const [signOutState, signOut] = useMutation(SignOutMutation);
  const startOver = useStartOver();
  const [location, navigate] = useLocation();
  const search = useSearch();

  if (fetching && !data) return <Loading what="Gatehouse" />;
  if (error && !data) {
    return (
      <main className="centered">
        <ErrorBanner error={error} onRetry={() => refetch({ requestPolicy: 'network-only' })} />
      </main>
    );
  }
  // Signed in, you come back to the page you asked for.
  if (!data?.me) {
    return <Redirect to={signInPath(data?.signupOpen ? '/sign-up' : '/sign-in', location, search)} replace />;
  }

  const onSignOut = async () => {
    // Asked before the session ends, not after: "stay" keeps both the edits and the session.
    if (!mayLeave()) return;
    await signOut({});
    leaveWithoutAsking();
    navigate('/sign-in', { replace: true });
    startOver();
  };

  return (
    <div className="shell">
      <header className="topbar">
        <Link href="/" className="brand">
          Gatehouse
        </Link>
        <nav className="nav">
          <NavLink href="/">Overview</NavLink>
          <NavLink href="/gates">Gates</NavLink>
          <NavLink href="/logs">Logs</NavLink>
          <NavLink href="/api-keys">API keys</NavLink>
          <NavLink href="/settings">Settings</NavLink>
        </nav>
        <div className="account">
          <span className="muted">{data.me.email}</span>
          <button
            type="button"
            className="button subtle"
            onClick={onSignOut}
            disabled={signOutState.fetching}
          >
            Sign out
          </button>
        </div>
      </header>
      <main className="content">{children}</main>
    </div>
  );
}

function NavLink({ href, children }: { href: string; children: ReactNode }) {
  // "/" is the overview alone, not every page under it.
  const [active] = useRoute(href === '/' ? '/' : `${href}/*?`);
  return (
    <Link href={href} className={active ? 'nav-link active' : 'nav-link'}>
      {children}
    </Link>
  );
}
