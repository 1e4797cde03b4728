/**
 * The request span (mounted only while tracing is on): a SERVER span per request, the child of
 * the client's W3C `traceparent` when it sends one, active while the routes run so the gate's
 * resolution, the reservations and the attempts nest under it. It ends when the answer has been
 * written (a stream's last byte) or the client has gone.
 */
import type { ServerResponse } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { spanFailed, tracingOn } from '../observability/tracing.ts';

export const requestSpan: MiddlewareHandler = async (c, next) => {
  const otel = tracingOn();
  if (!otel) return next();
  const { api, tracer } = otel;
  const parent = api.propagation.extract(api.ROOT_CONTEXT, c.req.raw.headers, {
    keys: (headers) => [...headers.keys()],
    get: (headers, key) => headers.get(key) ?? undefined,
  });
  const span = tracer.startSpan(
    `${c.req.method} ${c.req.path}`,
    {
      kind: api.SpanKind.SERVER,
      attributes: { 'http.request.method': c.req.method, 'url.path': c.req.path },
    },
    parent,
  );
  const end = () => {
    span.setAttribute('http.response.status_code', c.res.status);
    if (c.res.status >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
    span.end();
  };
  try {
    await api.context.with(api.trace.setSpan(parent, span), next);
  } catch (error) {
    spanFailed(span, error);
    span.end();
    throw error;
  }
  // Named after the route that answered (its pattern, not the ids in the path).
  const route = routePath(c);
  if (route && route !== '*' && route !== '/*') {
    span.updateName(`${c.req.method} ${route}`);
    span.setAttribute('http.route', route);
  }
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  if (!outgoing || outgoing.writableFinished || outgoing.destroyed) end();
  else outgoing.once('close', end);
};
