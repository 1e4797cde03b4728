/**
 * The REST API's OpenAPI 3.1 description, built from the routes themselves: each route carries a
 * `describe(...)` (hono-openapi's describeRoute, a middleware that only calls next) naming the
 * zod schemas its domain function validates with, and GET /openapi.json walks the app's routes.
 * Nothing here validates: the routes keep their own errors, in their own shapes, which the
 * responses below describe.
 */
import { CSRF_HEADER } from '@gatehouse/rules/csrf';
import type { Hono } from 'hono';
import {
  type DescribeRouteOptions,
  describeRoute,
  generateSpecs,
  resolver,
  uniqueSymbol,
} from 'hono-openapi';
import type { OpenAPIV3_1 } from 'openapi-types';
import { z } from 'zod';
import { type ErrorCode, HTTP_STATUS } from '../domain/errors.ts';
import { SESSION_COOKIE } from './auth.ts';
import { OPENAI_ERROR_TYPE } from './errors.ts';

/** Who answers a route's errors: the native body, OpenAI's, or Anthropic's. */
export type ErrorShape = 'native' | 'openai' | 'anthropic';

/**
 * A zod schema as JSON Schema (zod's own z.toJSONSchema), the way the route reads it: before
 * defaults and transforms; a refinement JSON Schema cannot say is left out.
 */
const schemaOf = (schema: z.ZodType) =>
  resolver(schema, { options: { io: 'input', unrepresentable: 'any' } });

const codesOf = (status: number) =>
  (Object.keys(HTTP_STATUS) as ErrorCode[]).filter((code) => HTTP_STATUS[code] === status);

const nativeError = z.object({
  error: z.object({
    code: z.string().describe('One of the codes of this status (the response lists them)'),
    message: z.string(),
    details: z
      .object({
        issues: z
          .array(z.object({ path: z.string(), message: z.string() }))
          .optional()
          .describe('The fields at fault (400, and a 409 on a field)'),
      })
      .catchall(z.unknown())
      .optional(),
    requestId: z.string().optional().describe('The log entry the failure left, where it left one'),
  }),
});

const openAIError = z.object({
  error: z.object({
    message: z.string(),
    type: z.string(),
    param: z.string().nullable().describe('The field at fault, on a 400'),
    code: z.string().nullable().describe("Gatehouse's native error code"),
    request_id: z.string().optional().describe('The log entry the failure left, where it left one'),
  }),
});

const anthropicError = z.object({
  type: z.literal('error'),
  error: z.object({ type: z.string(), message: z.string() }),
  request_id: z.string().optional().describe('The log entry the failure left, where it left one'),
});

const ERROR_SCHEMAS = {
  native: { name: 'NativeError', schema: nativeError },
  openai: { name: 'OpenAIError', schema: openAIError },
  anthropic: { name: 'AnthropicError', schema: anthropicError },
};

const WHY: Record<number, string> = {
  400: 'The request is invalid: the message and `issues` name the field',
  401: 'No valid API key or session',
  402: "A spending limit is reached (the gate's, its agent session's, or its key's)",
  403: 'Not allowed: CSRF header missing on a session, admin only, or a plan limit',
  404: 'Not found (or not yours)',
  409: 'Conflicts with what exists (a name or an email taken)',
  413: 'The body is larger than this route accepts',
  429: 'Too many requests; Retry-After says when to come back',
  500: "No model could answer (Anthropic's 500 api_error)",
  502: 'No model could answer (every attempt failed)',
  503: 'The database was too busy to finish the change in time; nothing was changed, send it again',
  504: 'The model did not answer in time',
  529: "The last model tried was overloaded (Anthropic's overloaded_error)",
};

function errorResponse(shape: ErrorShape, status: number): OpenAPIV3_1.ResponseObject {
  const codes = codesOf(status);
  const named =
    shape === 'native' && codes.length > 0 ? ` (code: ${codes.map((c) => `\`${c}\``).join(', ')})` : '';
  const type =
    shape === 'openai' && OPENAI_ERROR_TYPE[status] ? ` (type: \`${OPENAI_ERROR_TYPE[status]}\`)` : '';
  return {
    description: `${WHY[status] ?? 'Error'}${named}${type}`,
    content: {
      'application/json': { schema: { $ref: `#/components/schemas/${ERROR_SCHEMAS[shape].name}` } },
    },
  };
}

/** The error statuses of each family of routes. */
export const ERRORS = {
  /** A signed-in caller's read. */
  read: [400, 401, 404],
  /** A signed-in caller's change (a session must send the CSRF header). */
  write: [400, 401, 403, 404, 409, 413, 503],
  /** A request through a gate. */
  gateway: [400, 401, 402, 403, 404, 413, 429, 502, 503, 504],
  /** The same through Anthropic's statuses: 502 is its 500 or 529. */
  anthropic: [400, 401, 402, 403, 404, 413, 429, 500, 503, 504, 529],
} satisfies Record<string, number[]>;

type Body = z.ZodType | { schema: z.ZodType; media: string }[];

export type RouteDoc = {
  summary: string;
  description?: string;
  tags: string[];
  /** The body's schema (JSON), or one per media type. */
  body?: Body;
  /** The query's schema: an object whose fields are the parameters. */
  query?: z.ZodType;
  /** What a success answers (200 unless `status`). */
  ok: {
    status?: number;
    description: string;
    schema?: z.ZodType;
    /** Other media types the answer may come in (an event stream, audio, text). */
    media?: Record<string, OpenAPIV3_1.MediaTypeObject>;
  };
  /** The error statuses it answers, in `errorShape` (native unless said). */
  errors: number[];
  errorShape?: ErrorShape;
  /** Routes anyone may call (sign-up, sign-in). */
  public?: boolean;
};

/** A route's query parameters, from the zod object that reads the query. */
function parametersOf(query: z.ZodType): DescribeRouteOptions['parameters'] {
  const json = z.toJSONSchema(query, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, OpenAPIV3_1.SchemaObject>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, schema]) => {
    const { description, ...rest } = schema;
    return {
      name,
      in: 'query' as const,
      ...(json.required?.includes(name) && { required: true }),
      ...(description && { description }),
      // hono-openapi types parameters as OpenAPI 3.0's; the document is 3.1.
      schema: rest as never,
    };
  });
}

function requestBodyOf(body: Body) {
  const media = Array.isArray(body) ? body : [{ schema: body, media: 'application/json' }];
  return {
    required: true,
    content: Object.fromEntries(media.map((m) => [m.media, { schema: schemaOf(m.schema) }])),
  };
}

/** Describes a route for /openapi.json; at run time it only passes the request on. */
export function describe(doc: RouteDoc) {
  const okContent = {
    ...(doc.ok.schema && { 'application/json': { schema: schemaOf(doc.ok.schema) } }),
    ...doc.ok.media,
  };
  return describeRoute({
    summary: doc.summary,
    ...(doc.description && { description: doc.description }),
    tags: doc.tags,
    ...(doc.public && { security: [] }),
    ...(doc.query && { parameters: parametersOf(doc.query) }),
    ...(doc.body && { requestBody: requestBodyOf(doc.body) }),
    responses: {
      [doc.ok.status ?? 200]: {
        description: doc.ok.description,
        ...(Object.keys(okContent).length > 0 && { content: okContent }),
      },
      ...Object.fromEntries(doc.errors.map((s) => [s, errorResponse(doc.errorShape ?? 'native', s)])),
    },
  });
}

/**
 * `handler` carrying the documentation `describe` made, where the spec finds it as on describe's
 * own middleware: a data-plane request then takes no pass-through step for it (an async function
 * and its promise on every request).
 */
export function documented<H extends object>(doc: ReturnType<typeof describe>, handler: H): H {
  // hono-openapi's type for describeRoute's middleware leaves out the property it sets.
  const spec = (doc as unknown as Record<typeof uniqueSymbol, unknown>)[uniqueSymbol];
  return Object.assign(handler, { [uniqueSymbol]: spec });
}

/** Server-Sent Events, for the routes that stream when the body asks (`stream: true`). */
export const eventStream = (description: string): Record<string, OpenAPIV3_1.MediaTypeObject> => ({
  'text/event-stream': { schema: { type: 'string', description } },
});

const DESCRIPTION = `Gatehouse's REST API: the control plane (accounts, API keys, gates, agent sessions, the
Architect, logs) under \`/v1\`, the native data plane under \`/v3\`, and the drop-in routes that speak
OpenAI's and Anthropic's wire formats under \`/v1\`.

Authenticate with an API key in \`Authorization: Bearer <key>\` (\`x-api-key\` works too, as Anthropic's
clients send it), or with the dashboard's session cookie plus the \`${CSRF_HEADER}\` header on changes.
The drop-in routes read the gate from the \`x-gatehouse-gate-id\` header, a \`gateId\` in the body, or
the model (the gate's UUID, or \`gatehouse/<gate name>\`); their bodies are forwarded with fields this
description does not list. Any data-plane request may name its end user (kept on its log entry) in
the \`x-gatehouse-user\` header, OpenAI's \`user\` field or Anthropic's \`metadata.user_id\`.`;

/** The groups of routes, in the order a reader meets them. */
const TAGS = [
  { name: 'Accounts', description: "Sign-up, sign-in and sign-out (the dashboard's session)" },
  { name: 'API keys', description: 'Keys for the API; the secret is shown once' },
  { name: 'Gates', description: 'Stored configurations a request names: model, routing, limits' },
  { name: 'Agent gates', description: 'Sub-gates with roles, and the sessions of agents' },
  { name: 'Architect', description: 'Model recommendations and gate analyses' },
  { name: 'Logs', description: 'One entry per request, with totals over time' },
  { name: 'Admin', description: "The admin's view of every account" },
  { name: 'Native data plane', description: 'Requests through a gate: `{gateId, data, …}` under /v3' },
  { name: 'OpenAI-compatible', description: "OpenAI's wire format, so its SDKs work pointed at {base}/v1" },
  { name: 'Anthropic-compatible', description: "Anthropic's Messages API, so its SDK and Claude Code work" },
];

/** The whole document: every described route of `app`, with the error shapes and the ways in. */
export async function openAPIDocument(app: Hono): Promise<OpenAPIV3_1.Document> {
  const document = await generateSpecs(app, {
    documentation: {
      info: { title: 'Gatehouse', version: '1', description: DESCRIPTION },
      tags: TAGS,
      security: [{ apiKey: [] }, { anthropicApiKey: [] }, { session: [] }],
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer gh_…`' },
          anthropicApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: SESSION_COOKIE,
            description: `The dashboard's session; changes also need the \`${CSRF_HEADER}\` header`,
          },
        },
        schemas: Object.fromEntries(
          Object.values(ERROR_SCHEMAS).map(({ name, schema }) => {
            const { $schema: _, ...json } = z.toJSONSchema(schema, { io: 'input' });
            return [name, json as OpenAPIV3_1.SchemaObject];
          }),
        ),
      },
    },
  });
  return document as OpenAPIV3_1.Document;
}
