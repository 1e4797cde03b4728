/**
 * Video over HTTP: `POST /v3/video` and `GET /v3/video/:id` (with `/content`, the file itself).
 *
 * Providers make video in minutes. The request runs through the shared pipeline as every type
 * does, its job row written first (domain/videoJobs.ts); the route waits up to
 * GATEHOUSE_VIDEO_WAIT_MS for the run. Done by then, it answers 200 with the video; otherwise
 * 202 `{id, status: 'running'}`, and the run goes on in the background, the client's leaving
 * cancelling nothing, until it ends and writes the job row (the pipeline writes the log entry and
 * settles the spending then, as for any request). GET /v3/video/:id reads the row, from any
 * process sharing the database.
 */
import { randomUUID } from 'node:crypto';
import { isUuid } from '@gatehouse/rules/ids';
import { Hono } from 'hono';
import type { DataPlane } from '../dataplane/chat.ts';
import type { TaskOutcome } from '../dataplane/pipeline.ts';
import { nativeVideoSchema, type VideoRequest, videoKind, videoRequest } from '../dataplane/tasks/video.ts';
import { DomainError, parseWith, ValidationError } from '../domain/errors.ts';
import { loadGate } from '../domain/gateCache.ts';
import {
  finishVideoJob,
  readVideoFile,
  readVideoJob,
  startVideoJob,
  type VideoJob,
  type VideoJobResult,
} from '../domain/videoJobs.ts';
import { endUserOf } from '../http/caller.ts';
import { readJson } from '../http/errors.ts';
import type { ActorEnv } from '../http/middleware.ts';
import { describe, ERRORS } from '../http/openapi.ts';
import { outcomeHeaders } from '../http/sse.ts';
import { GATE_RESOLUTION, traced } from '../observability/tracing.ts';
import type { VideoAnswer } from '../providers/tasks/video.ts';

const tags = ['Native data plane'];

/** How long a process may take past its attempts' deadlines to write the job's end. */
const DEADLINE_SLACK_MS = 60_000;

const contentUrl = (id: string) => `/v3/video/${id}/content`;

function parse(body: unknown): VideoRequest {
  const { data, gateId: _gateId, ...envelope } = parseWith(nativeVideoSchema, body);
  return videoRequest(data, envelope);
}

function gateIdOf(body: unknown): string {
  const gateId = (body as { gateId?: unknown } | null)?.gateId;
  if (typeof gateId !== 'string' || !isUuid(gateId)) {
    throw new ValidationError([{ path: 'gateId', message: 'is required and must be a gate UUID' }]);
  }
  return gateId;
}

function resultOf(o: TaskOutcome<VideoAnswer>): { result: VideoJobResult; video: Buffer } {
  const video = o.answer.videos[0];
  if (!video) throw new Error('a video answer without a video');
  return {
    result: {
      model: o.modelUsed,
      mimeType: video.mimeType,
      bytes: video.data.length,
      seconds: o.answer.seconds,
      costUsd: o.costUsd,
      latencyMs: o.latencyMs,
    },
    video: video.data,
  };
}

/** A job as the API shows it; a succeeded one carries its video. */
function jobBody(
  job: Pick<VideoJob, 'id' | 'status' | 'result' | 'error' | 'video' | 'createdAt' | 'updatedAt'>,
) {
  const base = { id: job.id, status: job.status, createdAt: job.createdAt.toISOString() };
  if (job.status === 'running') return base;
  if (job.status === 'failed') return { ...base, error: job.error, endedAt: job.updatedAt.toISOString() };
  const r = job.result as VideoJobResult;
  const data = Buffer.from(job.video as Uint8Array);
  return {
    ...base,
    endedAt: job.updatedAt.toISOString(),
    model: r.model,
    videos: [
      { base64: data.toString('base64'), mimeType: r.mimeType, url: contentUrl(job.id), bytes: r.bytes },
    ],
    seconds: r.seconds,
    costUsd: r.costUsd,
    latencyMs: r.latencyMs,
  };
}

export function videoRoutes(
  dataPlane: DataPlane,
  opts: { maxBodyBytes: number; waitMs: number; timeoutMs: number },
) {
  const app = new Hono<ActorEnv>();

  app.post(
    '/video',
    describe({
      summary: 'Make a video through a gate',
      description:
        'Waits a while for the video: done by then, 200 with the job; otherwise 202 and the job runs on (GET its `statusUrl`).',
      tags,
      body: nativeVideoSchema,
      ok: { description: "The job, succeeded, with the video's `contentUrl`" },
      errors: ERRORS.gateway,
    }),
    async (c) => {
      const body = await readJson(c, opts.maxBodyBytes);
      const userId = c.var.actor.user.id;
      const gate = await traced(GATE_RESOLUTION, {}, () => loadGate(userId, gateIdOf(body)));
      const endUser = endUserOf(c, body);
      const id = randomUUID();
      const started = new Date();
      // Every model the gate may try gets its own deadline: past them all, the job was lost.
      const attempts = 1 + gate.fallbackModels.length;
      const deadline = new Date(started.getTime() + attempts * opts.timeoutMs + DEADLINE_SLACK_MS);
      await startVideoJob({ id, userId, gateId: gate.id, deadline });

      // No client signal: a client that leaves after a 202 (or before) cancels nothing.
      const { apiKey } = c.var.actor;
      const caller = {
        userId,
        endpoint: '/v3/video',
        body,
        ...(apiKey && { apiKey }),
        ...(endUser !== undefined && { endUser }),
      };
      const run = dataPlane.run(videoKind, caller, gate, () => parse(body), {
        id,
        attemptTimeoutMs: opts.timeoutMs,
      });
      const ended = run.then(
        async (outcome) => {
          const { result, video } = resultOf(outcome);
          await finishVideoJob(id, { status: 'succeeded', result, video }).catch((error) =>
            console.error('video: could not record job', id, error),
          );
          return { outcome, result, video };
        },
        async (error: unknown) => {
          const e =
            error instanceof DomainError ? error : new DomainError('upstream_error', 'The video failed');
          await finishVideoJob(id, { status: 'failed', error: { code: e.code, message: e.message } }).catch(
            (failure) => console.error('video: could not record job', id, failure),
          );
          throw error;
        },
      );
      ended.catch(() => {}); // after a 202 the failure lives in the job row

      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<'waiting'>((resolve) => {
        timer = setTimeout(() => resolve('waiting'), opts.waitMs);
      });
      const first = await Promise.race([
        ended.then(
          () => 'ended' as const,
          () => 'ended' as const,
        ),
        waited,
      ]);
      clearTimeout(timer);
      if (first === 'waiting') {
        return c.json(
          { id, status: 'running', createdAt: started.toISOString(), statusUrl: `/v3/video/${id}` },
          202,
          { location: `/v3/video/${id}` },
        );
      }
      const { outcome, result, video } = await ended; // a failure is the error answer
      const job = {
        id,
        status: 'succeeded' as const,
        result,
        error: null,
        video,
        createdAt: started,
        updatedAt: new Date(),
      };
      return c.json(jobBody(job), 200, outcomeHeaders(outcome));
    },
  );

  app.get(
    '/video/:id',
    describe({
      summary: 'A video job: running, succeeded or failed',
      tags,
      ok: { description: 'The job' },
      errors: ERRORS.read,
    }),
    async (c) => c.json(jobBody(await readVideoJob(c.var.actor.user.id, c.req.param('id')))),
  );

  app.get(
    '/video/:id/content',
    describe({
      summary: "A succeeded job's video, as its bytes",
      tags,
      ok: {
        description: 'The video, with its own Content-Type',
        media: { 'video/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
      },
      errors: ERRORS.read,
    }),
    async (c) => {
      const file = await readVideoFile(c.var.actor.user.id, c.req.param('id'));
      return c.body(file.data as Uint8Array<ArrayBuffer>, 200, {
        'content-type': file.mimeType,
        'content-length': String(file.data.byteLength),
      });
    },
  );

  return app;
}
