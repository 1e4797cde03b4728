import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { serveStatic } from '@hono/node-server/serve-static';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { secureHeaders } from 'hono/secure-headers';
import { type Config, migrationsDir } from './config.ts';
import { driver } from './db/client.ts';
import { pendingMigrations } from './db/migrate.ts';
import { NotFoundError } from './domain/errors.ts';
import { apiReferenceRoutes } from './http/apiReference.ts';
import { answerHeaders, errorResponse, tooLarge } from './http/errors.ts';
import { metricsRoute } from './http/metrics.ts';
import { requireActor } from './http/middleware.ts';
import { openAPIDocument } from './http/openapi.ts';
import { RememberingRouter } from './http/router.ts';
import { requestSpan } from './http/tracing.ts';
import { configureMetrics } from './observability/metrics.ts';
import { requestIdsInProcessLog, requestScope } from './observability/processLog.ts';
import { tracingOn } from './observability/tracing.ts';
import { adminRoutes } from './rest/admin.ts';
import { agentGateRoutes, sessionRoutes } from './rest/agentGates.ts';
import { anthropicRoutes } from './rest/anthropic/routes.ts';
import { apiKeyRoutes } from './rest/apiKeys.ts';
import { architectRoutes } from './rest/architect.ts';
import { authRoutes } from './rest/auth.ts';
import { nativeChatRoutes } from './rest/chat.ts';
import { gateRoutes } from './rest/gates.ts';
import { logRoutes } from './rest/logs.ts';
import { openAIRoutes } from './rest/openai.ts';
import { responsesRoutes } from './rest/responses/routes.ts';
import { NATIVE_TASKS, OPENAI_TASKS } from './rest/tasks/index.ts';
import { nativeTaskRoutes, openAITaskRoutes } from './rest/tasks/routes.ts';
import { videoRoutes } from './rest/video.ts';
import type { Runtime } from './runtime.ts';

/**
 * The dashboard's pages and assets: scripts only from this origin (the built SPA has no inline
 * script), never framed (clickjacking), no MIME sniffing. Inline styles stay allowed: the charts
 * set style attributes. Images, audio and video previews of log entries are data: and blob: URLs.
 */
const dashboardHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'", "'unsafe-inline'"],
    imgSrc: ["'self'", 'data:', 'blob:'],
    mediaSrc: ["'self'", 'data:', 'blob:'],
    connectSrc: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
  xFrameOptions: 'DENY',
  xContentTypeOptions: 'nosniff',
  referrerPolicy: 'same-origin',
  // Not HTTPS-specific here: a deployment behind TLS sets HSTS at its proxy.
  strictTransportSecurity: false,
  crossOriginEmbedderPolicy: false,
});

/** Control-plane bodies are small; a larger one is refused before it is read in full. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Builds the whole HTTP surface; listens nowhere (main.ts does, tests call app.request).
 * `draining`: the process is stopping (SIGTERM), so /readyz sends load balancers elsewhere.
 */
export function createApp(config: Config, runtime: Runtime, opts: { draining?: () => boolean } = {}) {
  const draining = opts.draining ?? (() => false);
  const app = new Hono({ router: new RememberingRouter() });
  app.onError((error, c) => errorResponse(c, error));
  // Each only when on: JSON process logs name the request a line is for; traces have its span.
  // (Before Node 24 the JSON lines carry no request id: nothing to scope.)
  if (config.observability.logFormat === 'json' && requestIdsInProcessLog) app.use('*', requestScope);
  if (tracingOn()) {
    for (const path of ['/v1/*', '/v3/*', '/graphql']) app.use(path, requestSpan);
  }
  app.use(answerHeaders);

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    if (draining()) return c.json({ status: 'draining' }, 503);
    try {
      if (!driver) throw new Error('no database');
      const pending = await pendingMigrations(driver, migrationsDir);
      if (pending.length > 0) return c.json({ status: 'migrating', pending }, 503);
      return c.json({ status: 'ready', database: driver.kind });
    } catch {
      return c.json({ status: 'unavailable', reason: 'database unreachable' }, 503);
    }
  });

  configureMetrics({ maxGates: config.observability.metricsMaxGates });
  app.get('/metrics', metricsRoute(runtime, config.observability.metricsToken));

  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => {
      // The rest of the body is never read: the connection closes once the 413 is sent.
      c.header('connection', 'close');
      return errorResponse(c, tooLarge(MAX_BODY_BYTES));
    },
  });
  // Chat bodies may carry images, so they get their own, larger limit, which the chat routes
  // enforce as they read; the OpenAI- and Anthropic-compatible routes answer in their own error
  // shapes (the Responses API in OpenAI's), so they come before the native /v1 middleware.
  const chatLimits = { maxBodyBytes: config.maxChatBodyBytes };
  app.route('/v1', openAIRoutes(runtime.dataPlane, chatLimits, runtime.models));
  app.route('/v1', anthropicRoutes(runtime.dataPlane, chatLimits));
  app.route('/v1', responsesRoutes(runtime.dataPlane, chatLimits));
  app.route('/v1', openAITaskRoutes(runtime.dataPlane, chatLimits, OPENAI_TASKS));
  app.use('/v1/*', limit);
  app.use('/graphql', limit);

  app.route('/v1/auth', authRoutes(config));
  app.use('/v1/*', requireActor);
  app.use('/v3/*', requireActor);
  app.route('/v3', nativeChatRoutes(runtime.dataPlane, chatLimits));
  app.route('/v3', nativeTaskRoutes(runtime.dataPlane, chatLimits, NATIVE_TASKS));
  app.route('/v3', videoRoutes(runtime.dataPlane, { ...chatLimits, ...config.video }));
  app.route('/v1/api-keys', apiKeyRoutes(runtime.spending));
  app.route('/v1/gates', gateRoutes(runtime));
  app.route('/v1/gates', agentGateRoutes);
  app.route('/v1/gates', architectRoutes(runtime));
  app.route('/v1/sessions', sessionRoutes);
  app.route('/v1/logs', logRoutes);
  app.route('/v1/admin', adminRoutes);
  app.all('/v1/*', () => {
    throw new NotFoundError('Route');
  });
  app.all('/v3/*', () => {
    throw new NotFoundError('Route');
  });

  // The dashboard's API, built on its first request: a process that only serves the gateway's API
  // never pays the schema's ~80 MB of memory.
  let graphql: Promise<(c: Context) => Promise<Response>> | undefined;
  app.on(['GET', 'POST', 'OPTIONS'], '/graphql', async (c) => {
    graphql ??= import('./graphql/yoga.ts').then(
      (m) => m.createGraphQLHandler(config, runtime),
      (error) => {
        graphql = undefined; // the next request tries again
        throw error;
      },
    );
    return (await graphql)(c);
  });

  // The API's description and its reference, before the dashboard's routes take every other path.
  app.route(
    '/',
    apiReferenceRoutes(() => openAPIDocument(app)),
  );

  // The dashboard: built assets, and index.html for every client-side route.
  if (existsSync(config.webDist)) {
    const indexHtml = readFile(path.join(config.webDist, 'index.html'), 'utf8');
    app.use('/*', dashboardHeaders, serveStatic({ root: config.webDist }));
    app.get('/*', async (c) => c.html(await indexHtml));
  } else {
    app.get('/', (c) =>
      c.text('Gatehouse is running. The dashboard is not built: run `pnpm build` (or `pnpm start`).'),
    );
  }
  return app;
}
