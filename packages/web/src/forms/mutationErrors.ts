import { graphql } from '../graphql.ts';

/**
 * What every form's mutation asks of a failure: its message, a validation error's issues and a
 * conflict's field (what showMutationErrors puts on the form). Unmasked, so the fields read as
 * the document's own.
 */
export const MutationErrorFields = graphql(`
  fragment MutationErrorFields on Error @_unmask {
    message
    ... on ValidationError {
      issues {
        path
        message
      }
    }
    ... on ConflictError {
      field
    }
  }
`);
