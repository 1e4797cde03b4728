import { Hono } from 'hono';
import { getLog, listLogs, logOverview, logSeries } from '../domain/logs.ts';
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
  .get('/:id', async (c) => c.json(logDetailView(await getLog(c.var.actor.user.id, c.req.param('id')))));
