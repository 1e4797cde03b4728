import { Redirect, Route, Switch } from 'wouter';
import { AppShell } from './session/AppShell.tsx';
import { SignInPage } from './session/SignInPage.tsx';
import { SignUpPage } from './session/SignUpPage.tsx';

export function App() {
  return (
    <Switch>
      <Route path="/sign-in" component={SignInPage} />
      <Route path="/sign-up" component={SignUpPage} />
      <Route>
        <AppShell>
          <Switch>
            <Route path="/">
              <Redirect to="/gates" replace />
            </Route>
            <Route component={NotFoundPage} />
          </Switch>
        </AppShell>
      </Route>
    </Switch>
  );
}

function NotFoundPage() {
  return (
    <section className="page">
      <h1>Page not found</h1>
      <p>Nothing lives at this address yet.</p>
    </section>
  );
}
