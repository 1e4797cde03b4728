import { Hono } from 'hono';
import { getLog, listLogs, logOverview, logSeries } from '../domain/logs.ts';
import type { ActorEnv } from '../http/middleware.ts';

export const logRoutes = new Hono<ActorEnv>()
  .get('/', async (c) => c.json(await listLogs(c.var.actor.user.id, c.req.query())))
  .get('/overview', async (c) => c.json(await logOverview(c.var.actor.user.id, c.req.query())))
  .get('/series', async (c) => c.json(await logSeries(c.var.actor.user.id, c.req.query())))
  .get('/:id', async (c) => c.json(await getLog(c.var.actor.user.id, c.req.param('id'))));
