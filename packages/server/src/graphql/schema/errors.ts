import type { FieldIssue } from '@gatehouse/rules/issues';
import {
  ConflictError,
  type DomainError,
  ForbiddenError,
  NotFoundError,
  PlanLimitError,
  RateLimitedError,
  ServiceUnavailableError,
  UnauthorizedError,
  ValidationError,
} from '../../domain/errors.ts';
import { builder } from '../builder.ts';

export const ErrorInterface = builder.interfaceRef<DomainError>('Error').implement({
  description: 'An expected failure, with a message for the user',
  fields: (t) => ({
    message: t.exposeString('message'),
    code: t.exposeString('code'),
  }),
});

const FieldIssueRef = builder.objectRef<FieldIssue>('FieldIssue').implement({
  description:
    'A problem with one input field; path is dotted ("fallbackModels.1"), empty for the whole input',
  fields: (t) => ({ path: t.exposeString('path'), message: t.exposeString('message') }),
});

builder.objectType(ValidationError, {
  name: 'ValidationError',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof ValidationError,
  fields: (t) => ({ issues: t.field({ type: [FieldIssueRef], resolve: (e) => e.issues }) }),
});

builder.objectType(NotFoundError, {
  name: 'NotFoundError',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof NotFoundError,
});

builder.objectType(ConflictError, {
  name: 'ConflictError',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof ConflictError,
  fields: (t) => ({ field: t.exposeString('field', { nullable: true }) }),
});

builder.objectType(PlanLimitError, {
  name: 'PlanLimitError',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof PlanLimitError,
  fields: (t) => ({ limit: t.exposeInt('limit') }),
});

builder.objectType(ForbiddenError, {
  name: 'ForbiddenError',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof ForbiddenError,
});

builder.objectType(UnauthorizedError, {
  name: 'UnauthorizedError',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof UnauthorizedError,
});

builder.objectType(RateLimitedError, {
  name: 'RateLimitedError',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof RateLimitedError,
  fields: (t) => ({
    retryAfterSeconds: t.exposeInt('retryAfterSeconds', { description: 'When to try again' }),
  }),
});

builder.objectType(ServiceUnavailableError, {
  name: 'ServiceUnavailableError',
  description:
    'The server was too busy to save the change in time; nothing was changed, and it may be sent again',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof ServiceUnavailableError,
});
