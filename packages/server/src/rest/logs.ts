import { Hono } from 'hono';
import { getLog, getLogMedia, listLogs, logOverview, logSeries } from '../domain/logs.ts';
import type { ActorEnv } from '../http/middleware.ts';
import { logDetailView, logEntryView, logOverviewView, logSeriesView } from '../http/views.ts';

export const logRoutes = new Hono<ActorEnv>()
  .get('/', async (c) => {
    const page = await listLogs(c.var.actor.user.id, c.req.query());
    return c.json({
      logs: page.items.map(logEntryView),
      pagination: { limit: page.limit, nextCursor: page.nextCursor, hasMore: page.hasMore },
    });
  })
  .get('/overview', async (c) =>
    c.json(logOverviewView(await logOverview(c.var.actor.user.id, c.req.query()))),
  )
  .get('/series', async (c) => c.json(logSeriesView(await logSeries(c.var.actor.user.id, c.req.query()))))
  .get('/:id', async (c) => c.json(logDetailView(await getLog(c.var.actor.user.id, c.req.param('id')))))
  // A file the entry's answer carried (an image, speech), as its bytes, to the entry's owner only.
  .get('/:id/media/:index', async (c) => {
    const media = await getLogMedia(c.var.actor.user.id, c.req.param('id'), c.req.param('index'));
    return c.body(media.data as Uint8Array<ArrayBuffer>, 200, {
      'content-type': media.mimeType,
      'content-length': String(media.data.byteLength),
      'cache-control': 'private, max-age=86400, immutable',
      'x-content-type-options': 'nosniff',
      // Opened as a page of its own, a file runs nothing (a provider's SVG, say).
      'content-security-policy': "default-src 'none'; sandbox",
    });
  });
