import { Link, Route, Switch } from 'wouter';
import { ApiKeysPage } from './apiKeys/ApiKeysPage.tsx';
import { CreateGatePage } from './gates/CreateGatePage.tsx';
import { GatePage } from './gates/GatePage.tsx';
import { GatesPage } from './gates/GatesPage.tsx';
import { SessionPage } from './gates/SessionPage.tsx';
import { LogEntryRedirect, LogsPage } from './logs/LogsPage.tsx';
import { OverviewPage } from './overview/OverviewPage.tsx';
import { AppShell } from './session/AppShell.tsx';
import { SignInPage } from './session/SignInPage.tsx';
import { SignUpPage } from './session/SignUpPage.tsx';
import { SettingsPage } from './settings/SettingsPage.tsx';
import { useTitle } from './ui/useTitle.ts';

export function App() {
  return (
    <Switch>
      <Route path="/sign-in" component={SignInPage} />
      <Route path="/sign-up" component={SignUpPage} />
      <Route>
        <AppShell>
          <Switch>
            <Route path="/" component={OverviewPage} />
            <Route path="/gates" component={GatesPage} />
            <Route path="/gates/new" component={CreateGatePage} />
            <Route path="/gates/:id/session" component={SessionPage} />
            <Route path="/gates/:id" component={GatePage} />
            <Route path="/logs" component={LogsPage} />
            <Route path="/logs/:id" component={LogEntryRedirect} />
            <Route path="/settings" component={SettingsPage} />
            <Route path="/api-keys" component={ApiKeysPage} />
            <Route component={NotFoundPage} />
          </Switch>
        </AppShell>
      </Route>
    </Switch>
  );
}

function NotFoundPage() {
  useTitle('Page not found');
  return (
    <section className="page">
      <h1>Page not found</h1>
      <p>
        Nothing lives at this address. <Link href="/gates">Go to your gates</Link>.
      </p>
    </section>
  );
}
