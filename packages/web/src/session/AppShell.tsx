import { type KeyboardEvent, type ReactNode, useEffect, useRef, useState } from 'react';
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
      <SkipLink />
      <header className="topbar">
        <Link href="/" className="brand">
          Gatehouse
        </Link>
        <SiteMenu>
          <nav className="nav" aria-label="Main">
            <NavLink href="/">Overview</NavLink>
            <NavLink href="/gates">Gates</NavLink>
            <NavLink href="/logs">Logs</NavLink>
            <NavLink href="/api-keys">API keys</NavLink>
            <NavLink href="/settings">Settings</NavLink>
          </nav>
          <div className="account">
            <span className="muted account-email">{data.me.email}</span>
            <button
              type="button"
              className="button subtle"
              onClick={onSignOut}
              disabled={signOutState.fetching}
            >
              Sign out
            </button>
          </div>
        </SiteMenu>
      </header>
      <main id="content" className="content" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

/**
 * The first thing Tab reaches: past the top bar to the page itself. A plain in-page link; the
 * page's <main> takes the focus (tabIndex -1), and the router, which reads the path, ignores the hash.
 */
function SkipLink() {
  return (
    <a href="#content" className="skip-link">
      Skip to content
    </a>
  );
}

/**
 * The links and the account. On a wide window they sit in the bar; below 640 px (styles.css) they
 * fold behind a Menu button, which opens them, and which a link followed or Escape closes again.
 */
function SiteMenu({ children }: { children: ReactNode }) {
  const [open, setOpen] = useState(false);
  const [location] = useLocation();
  const button = useRef<HTMLButtonElement>(null);

  // Following a link (or any other change of page) folds the menu away.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the location is the trigger, not an input.
  useEffect(() => setOpen(false), [location]);

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape' && open) {
      setOpen(false);
      button.current?.focus();
    }
  };

  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: Escape from inside the opened menu closes it.
    <div className="site-menu" onKeyDown={onKeyDown}>
      <button
        ref={button}
        type="button"
        className="button subtle menu-button"
        aria-expanded={open}
        aria-controls="site-menu"
        onClick={() => setOpen((was) => !was)}
      >
        Menu
      </button>
      <div id="site-menu" className={open ? 'menu open' : 'menu'}>
        {children}
      </div>
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
