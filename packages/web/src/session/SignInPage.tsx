import { useForm } from 'react-hook-form';
import { useMutation, useQuery } from 'urql';
import { Link, Redirect, useLocation, useSearchParams } from 'wouter';
import { useStartOver } from '../client.tsx';
import { showMutationErrors } from '../forms/formErrors.ts';
import { MutationErrorFields } from '../forms/mutationErrors.ts';
import { graphql } from '../graphql.ts';
import { ErrorBanner, Loading } from '../ui/status.tsx';
import { AuthLayout } from './AuthLayout.tsx';
import { type Credentials, CredentialsForm } from './CredentialsForm.tsx';
import { credentialsField } from './credentialsField.ts';
import { safeReturnPath, signInPath } from './returnTo.ts';

const SignInPageQuery = graphql(`
  query SignInPage {
    me {
      id
    }
    signupOpen
  }
`);

const SignInMutation = graphql(
  `
  mutation SignIn($input: CredentialsInput!) {
    signIn(input: $input) {
      __typename
      ... on MutationSignInSuccess {
        data {
          user {
            id
          }
        }
      }
      ...MutationErrorFields
    }
  }
`,
  [MutationErrorFields],
);

export function SignInPage() {
  const [{ data, fetching, error }, refetch] = useQuery({ query: SignInPageQuery });
  const [, signIn] = useMutation(SignInMutation);
  const form = useForm<Credentials>({ defaultValues: { email: '', password: '' } });
  const startOver = useStartOver();
  const [, navigate] = useLocation();
  const [search] = useSearchParams();
  const next = safeReturnPath(search.get('next'));

  if (fetching && !data) return <Loading what="Gatehouse" />;
  if (data?.me) return <Redirect to={next} replace />;

  const onSubmit = async (input: Credentials) => {
    const result = await signIn({ input });
    const outcome = result.data?.signIn;
    if (outcome?.__typename === 'MutationSignInSuccess') {
      navigate(next, { replace: true });
      startOver();
      return;
    }
    showMutationErrors(form, outcome, {
      fieldOf: credentialsField,
      unanswered: result.error?.message ?? 'Sign-in failed',
    });
  };

  return (
    <AuthLayout title="Sign in">
      {error && <ErrorBanner error={error} onRetry={() => refetch({ requestPolicy: 'network-only' })} />}
      <CredentialsForm form={form} onSubmit={onSubmit} submitLabel="Sign in" />
      {data?.signupOpen && (
        <p className="muted centered-text">
          No account yet? <Link href={signInPath('/sign-up', next, '')}>Create one</Link>
        </p>
      )}
    </AuthLayout>
  );
}
