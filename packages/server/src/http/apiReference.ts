/**
 * GET /openapi.json, the REST API's description, and GET /docs, a browsable reference of it:
 * Swagger UI from the swagger-ui-dist package in node_modules, its files served from here (no
 * CDN), its start-up script a file of its own, under a Content-Security-Policy that allows
 * nothing from another origin and no inline script.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Hono } from 'hono';
import { compress } from 'hono/compress';
import { secureHeaders } from 'hono/secure-headers';
import type { OpenAPIV3_1 } from 'openapi-types';
import { NotFoundError } from '../domain/errors.ts';

const swaggerUiDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The files of swagger-ui-dist the page loads, and their types: nothing else is served from it. */
const ASSETS: Record<string, string | undefined> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

// validatorUrl: null keeps Swagger UI from sending the document to validator.swagger.io.
const START = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#reference',
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: false,
    defaultModelsExpandDepth: 0,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Gatehouse API reference</title>
    <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
    <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
  </head>
  <body>
    <div id="reference"></div>
    <script src="/docs/assets/swagger-ui-bundle.js"></script>
    <script src="/docs/assets/start.js"></script>
  </body>
</html>
`;

const referenceHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", 'data:'],
    fontSrc: ["'self'"],
    connectSrc: ["'self'"],
    baseUri: ["'none'"],
    formAction: ["'none'"],
    frameAncestors: ["'none'"],
  },
  xFrameOptions: 'DENY',
  xContentTypeOptions: 'nosniff',
  referrerPolicy: 'same-origin',
  strictTransportSecurity: false,
  crossOriginEmbedderPolicy: false,
});

/** `document` builds the description; it is built once, on the first request for it. */
export function apiReferenceRoutes(document: () => Promise<OpenAPIV3_1.Document>) {
  let built: Promise<OpenAPIV3_1.Document> | undefined;
  const files = new Map<string, Promise<Buffer>>();
  return new Hono()
    .get('/openapi.json', async (c) => {
      built ??= document().catch((error) => {
        built = undefined; // the next request tries again
        throw error;
      });
      return c.json(await built);
    })
    .use('/docs/*', referenceHeaders, compress())
    .get('/docs', (c) => c.html(PAGE))
    .get('/docs/assets/start.js', (c) =>
      c.body(START, 200, { 'content-type': 'text/javascript; charset=utf-8' }),
    )
    .get('/docs/assets/:file', async (c) => {
      const name = c.req.param('file');
      const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
      if (!type) throw new NotFoundError('File');
      let file = files.get(name);
      if (!file) {
        file = readFile(path.join(swaggerUiDir, name));
        files.set(name, file);
      }
      return c.body(new Uint8Array(await file), 200, {
        'content-type': type,
        'cache-control': 'public, max-age=3600',
      });
    });
}
