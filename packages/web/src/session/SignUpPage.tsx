import { credentialsSchema } from '@gatehouse/rules/account';
import { zodResolver } from '@hookform/resolvers/zod';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { useMutation, useQuery } from 'urql';
import { Link, Redirect, useLocation, useSearchParams } from 'wouter';
import { useStartOver } from '../client.tsx';
import { showMutationErrors } from '../forms/formErrors.ts';
import { MutationErrorFields } from '../forms/mutationErrors.ts';
import { graphql } from '../graphql.ts';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { leaveWithoutAsking, SECRET_QUESTION, useUnsavedChanges } from '../ui/unsavedChanges.ts';
import { ApiKeyReveal } from './ApiKeyReveal.tsx';
import { AuthLayout } from './AuthLayout.tsx';
import { type Credentials, CredentialsForm } from './CredentialsForm.tsx';
import { credentialsField } from './credentialsField.ts';
import { safeReturnPath, signInPath } from './returnTo.ts';

const SignUpPageQuery = graphql(`
  query SignUpPage {
    me {
      id
    }
    signupOpen
    firstAccount
  }
`);

const SignUpMutation = graphql(
  `
  mutation SignUp($input: CredentialsInput!) {
    signUp(input: $input) {
      __typename
      ... on MutationSignUpSuccess {
        data {
          session {
            user {
              id
              email
            }
          }
          apiKey {
            key
            apiKey {
              id
              name
              prefix
            }
          }
        }
      }
      ...MutationErrorFields
    }
  }
`,
  [MutationErrorFields],
);

type IssuedKey = { key: string; name: string };

export function SignUpPage() {
  const [{ data, fetching, error }, refetch] = useQuery({ query: SignUpPageQuery });
  const [, signUp] = useMutation(SignUpMutation);
  // The server's own rules (email, 8–200 character password), checked before anything is sent.
  const form = useForm<Credentials>({
    defaultValues: { email: '', password: '' },
    resolver: zodResolver(credentialsSchema),
  });
  const [issued, setIssued] = useState<IssuedKey | null>(null);
  const startOver = useStartOver();
  const [, navigate] = useLocation();
  // The page asked for before signing up, as sign-in returns to it; a new account starts at its gates.
  const [search] = useSearchParams();
  const asked = safeReturnPath(search.get('next'));
  const next = asked === '/' ? '/gates' : asked;
  const signIn = signInPath('/sign-in', asked, '');
  // Closing the tab, reloading or going Back while the key shows asks first; Continue does not.
  useUnsavedChanges(issued !== null, SECRET_QUESTION);

  // The key is shown before anything else: it cannot be read again once this page is left.
  if (issued) {
    return (
      <AuthLayout title="Your first API key" intro="Applications use it to call your gates.">
        <ApiKeyReveal
          apiKey={issued.key}
          name={issued.name}
          continueLabel={next === '/gates' ? 'Continue to gates' : 'Continue'}
          onContinue={() => {
            leaveWithoutAsking();
            navigate(next, { replace: true });
            startOver();
          }}
        />
      </AuthLayout>
    );
  }
  if (fetching && !data) return <Loading what="Gatehouse" />;
  if (data?.me) return <Redirect to={next} replace />;
  if (data && !data.signupOpen) {
    return (
      <AuthLayout title="Sign-up is closed">
        <p>
          An account exists already, and this Gatehouse does not take new sign-ups.{' '}
          <Link href={signIn}>Sign in</Link> instead.
        </p>
      </AuthLayout>
    );
  }

  const onSubmit = async (input: Credentials) => {
    const result = await signUp({ input });
    const outcome = result.data?.signUp;
    if (outcome?.__typename === 'MutationSignUpSuccess') {
      setIssued({ key: outcome.data.apiKey.key, name: outcome.data.apiKey.apiKey.name });
      return;
    }
    showMutationErrors(form, outcome, {
      fieldOf: credentialsField,
      unanswered: result.error?.message ?? 'Sign-up failed',
    });
  };

  return (
    <AuthLayout
      title="Create your account"
      intro={
        data?.firstAccount
          ? 'You are the first here: this account administers this Gatehouse.'
          : 'Sign-up is open on this Gatehouse: your account sees only its own gates, keys and logs.'
      }
    >
      {error && <ErrorBanner error={error} onRetry={() => refetch({ requestPolicy: 'network-only' })} />}
      <CredentialsForm form={form} onSubmit={onSubmit} submitLabel="Create account" newPassword />
      <p className="muted centered-text">
        Have an account? <Link href={signIn}>Sign in</Link>
      </p>
    </AuthLayout>
  );
}
