import { Hono } from 'hono';
import { z } from 'zod';
import {
  getLog,
  getLogMedia,
  listLogs,
  logOverview,
  logQuerySchema,
  logSeries,
  overviewQuerySchema,
  seriesQuerySchema,
} from '../domain/logs.ts';
import type { ActorEnv } from '../http/middleware.ts';
import { describe, ERRORS } from '../http/openapi.ts';
import { logDetailShape, logEntryShape, paginationShape } from '../http/shapes.ts';
import { logDetailView, logEntryView, logOverviewView, logSeriesView } from '../http/views.ts';

const tags = ['Logs'];

export const logRoutes = new Hono<ActorEnv>()
  .get(
    '/',
    describe({
      summary: 'List log entries, newest first',
      tags,
      query: logQuerySchema,
      ok: {
        description: 'A page of entries',
        schema: z.object({ logs: z.array(logEntryShape), pagination: paginationShape }),
      },
      errors: ERRORS.read,
    }),
    async (c) => {
      const page = await listLogs(c.var.actor.user.id, c.req.query());
      return c.json({
        logs: page.items.map(logEntryView),
        pagination: { limit: page.limit, nextCursor: page.nextCursor, hasMore: page.hasMore },
      });
    },
  )
  .get(
    '/overview',
    describe({
      summary:
        'Totals over a window: requests, cost, latency, active gates, recent requests, spending by key and by end user',
      tags,
      query: overviewQuerySchema,
      ok: { description: 'The totals' },
      errors: ERRORS.read,
    }),
    async (c) => c.json(logOverviewView(await logOverview(c.var.actor.user.id, c.req.query()))),
  )
  .get(
    '/series',
    describe({
      summary: 'Requests, cost and latency per hour or day over a window',
      tags,
      query: seriesQuerySchema,
      ok: { description: 'The points' },
      errors: ERRORS.read,
    }),
    async (c) => c.json(logSeriesView(await logSeries(c.var.actor.user.id, c.req.query()))),
  )
  .get(
    '/:id',
    describe({
      summary: 'One log entry in full',
      tags,
      ok: { description: 'The entry, with the JSON sent and received', schema: logDetailShape },
      errors: ERRORS.read,
    }),
    async (c) => c.json(logDetailView(await getLog(c.var.actor.user.id, c.req.param('id')))),
  )
  // A file the entry's answer carried (an image, speech), as its bytes, to the entry's owner only.
  .get(
    '/:id/media/:index',
    describe({
      summary: "A file the entry's answer carried (an image, speech), as its bytes",
      tags,
      ok: {
        description: 'The file, with its own Content-Type',
        media: {
          'application/octet-stream': {
            schema: { type: 'string', contentMediaType: 'application/octet-stream' },
          },
        },
      },
      errors: ERRORS.read,
    }),
    async (c) => {
      const media = await getLogMedia(c.var.actor.user.id, c.req.param('id'), c.req.param('index'));
      return c.body(media.data as Uint8Array<ArrayBuffer>, 200, {
        'content-type': media.mimeType,
        'content-length': String(media.data.byteLength),
        'cache-control': 'private, max-age=86400, immutable',
        'x-content-type-options': 'nosniff',
        // Opened as a page of its own, a file runs nothing (a provider's SVG, say).
        'content-security-policy': "default-src 'none'; sandbox",
      });
    },
  );
