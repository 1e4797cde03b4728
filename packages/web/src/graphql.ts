import { initGraphQLTada } from 'gql.tada';
import type { introspection } from './graphql-env.d.ts';

/** Typed documents, checked against ../../schema.graphql (see `pnpm typecheck`). */
export const graphql = initGraphQLTada<{
  introspection: introspection;
  scalars: { DateTime: string; JSON: unknown };
}>();

export type { ResultOf, VariablesOf } from 'gql.tada';
