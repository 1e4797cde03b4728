import { Hono } from 'hono';
import { z } from 'zod';
import {
  exportLogs,
  getLog,
  getLogMedia,
  listLogs,
  logExportQuerySchema,
  logOverview,
  logQuerySchema,
  logSeries,
  logSummary,
  logSummaryQuerySchema,
  overviewQuerySchema,
  seriesQuerySchema,
} from '../domain/logs.ts';
import { csvHeader, csvRows, EXPORT_CONTENT_TYPE, exportFileName, jsonLines } from '../http/logExport.ts';
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
    '/summary',
    describe({
      summary:
        'How many entries the filters match (exact up to 10,000, then estimated and flagged), with their cost and tokens',
      tags,
      query: logSummaryQuerySchema,
      ok: {
        description: 'The count and the sums',
        schema: z.object({
          count: z.number().int(),
          estimated: z.boolean(),
          cost_usd: z.number(),
          prompt_tokens: z.number().int(),
          completion_tokens: z.number().int(),
          total_tokens: z.number().int(),
        }),
      },
      errors: ERRORS.read,
    }),
    async (c) => {
      const s = await logSummary(c.var.actor.user.id, c.req.query());
      return c.json({
        count: s.count,
        estimated: s.estimated,
        cost_usd: s.costUsd,
        prompt_tokens: s.promptTokens,
        completion_tokens: s.completionTokens,
        total_tokens: s.totalTokens,
      });
    },
  )
  .get(
    '/export',
    describe({
      summary: 'Every entry the filters match, newest first, as CSV or JSON Lines, streamed as it is read',
      tags,
      query: logExportQuerySchema,
      ok: {
        description: 'A download (Content-Disposition: attachment)',
        media: {
          'text/csv': { schema: { type: 'string' } },
          'application/x-ndjson': { schema: { type: 'string' } },
        },
      },
      errors: ERRORS.read,
    }),
    (c) => {
      // Checked here, before the first byte: a bad parameter is a 400, not a broken download.
      const { format, pages } = exportLogs(c.var.actor.user.id, c.req.query());
      const encoder = new TextEncoder();
      let started = false;
      const body = new ReadableStream<Uint8Array>({
        // One page read per pull: the client's pace sets how far ahead the export reads.
        async pull(controller) {
          if (!started && format === 'csv') controller.enqueue(encoder.encode(csvHeader()));
          started = true;
          try {
            const next = await pages.next();
            if (next.done) controller.close();
            else
              controller.enqueue(
                encoder.encode(format === 'csv' ? csvRows(next.value) : jsonLines(next.value)),
              );
          } catch (error) {
            controller.error(error);
          }
        },
        async cancel() {
          await pages.return(undefined);
        },
      });
      return c.body(body, 200, {
        'content-type': EXPORT_CONTENT_TYPE[format],
        'content-disposition': `attachment; filename="${exportFileName(format)}"`,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
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
