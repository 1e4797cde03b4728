/**
 * Video jobs (the video_jobs table): a video request while it runs and after, so that any
 * gateway process sharing the database answers GET /v3/video/:id. The process running the
 * request writes the row when it starts and again when it ends; a process that stops meanwhile
 * (a restart, a crash) leaves the row running, and the first read after its deadline marks it
 * failed. The log entry and the spending are written by the pipeline when the run ends.
 */
import { isUuid } from '@gatehouse/rules/ids';
import { sql } from '../db/client.ts';
import { NotFoundError } from './errors.ts';

export type VideoJobStatus = 'running' | 'succeeded' | 'failed';

/** The answer's fields the job keeps besides the file. */
export type VideoJobResult = {
  model: string;
  mimeType: string;
  bytes: number;
  seconds: number;
  costUsd: number;
  latencyMs: number;
};

export type VideoJob = {
  id: string;
  status: VideoJobStatus;
  result: VideoJobResult | null;
  error: { code: string; message: string } | null;
  /** A succeeded job's file. */
  video: Uint8Array | null;
  createdAt: Date;
  updatedAt: Date;
};

export const LOST_JOB = {
  code: 'upstream_error',
  message:
    'The gateway process running this video stopped before it ended (a restart or a crash); the provider may have finished it, but the gateway holds no result. Send the request again.',
};

export async function startVideoJob(job: { id: string; userId: string; gateId: string; deadline: Date }) {
  await sql().query(
    `INSERT INTO video_jobs (id, user_id, gate_id, status, deadline)
     VALUES ($1::uuid, $2::uuid, $3::uuid, 'running', $4::timestamptz)`,
    [job.id, job.userId, job.gateId, job.deadline.toISOString()],
  );
}

export async function finishVideoJob(
  id: string,
  end:
    | { status: 'succeeded'; result: VideoJobResult; video: Buffer }
    | { status: 'failed'; error: { code: string; message: string } },
) {
  if (end.status === 'succeeded') {
    await sql().query(
      `UPDATE video_jobs SET status = 'succeeded', result = $2::jsonb, video = $3, updated_at = now()
       WHERE id = $1::uuid`,
      [id, JSON.stringify(end.result), end.video],
    );
  } else {
    await sql().query(
      `UPDATE video_jobs SET status = 'failed', error = $2::jsonb, updated_at = now() WHERE id = $1::uuid`,
      [id, JSON.stringify(end.error)],
    );
  }
}

type Row = {
  id: string;
  status: VideoJobStatus;
  result: VideoJobResult | null;
  error: { code: string; message: string } | null;
  video: Uint8Array | null;
  deadline: Date | string;
  created_at: Date | string;
  updated_at: Date | string;
};

/** The caller's job, or a 404 for anyone else's or none; a running job past its deadline is failed here. */
export async function readVideoJob(userId: string, id: string): Promise<VideoJob> {
  const [row] = isUuid(id)
    ? await sql().query<Row>(
        `SELECT id, status, result, error, video, deadline, created_at, updated_at FROM video_jobs
         WHERE id = $1::uuid AND user_id = $2::uuid`,
        [id, userId],
      )
    : [];
  if (!row) throw new NotFoundError('Video job');
  let job: VideoJob = {
    id: row.id,
    status: row.status,
    result: row.result,
    error: row.error,
    video: row.video,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
  if (job.status === 'running' && new Date(row.deadline).getTime() < Date.now()) {
    // Only if it is still running: the process may have finished it a moment ago.
    const [lost] = await sql().query<{ updated_at: Date | string }>(
      `UPDATE video_jobs SET status = 'failed', error = $2::jsonb, updated_at = now()
       WHERE id = $1::uuid AND status = 'running' RETURNING updated_at`,
      [id, JSON.stringify(LOST_JOB)],
    );
    job = lost
      ? { ...job, status: 'failed', error: LOST_JOB, updatedAt: new Date(lost.updated_at) }
      : await readVideoJob(userId, id);
  }
  return job;
}

/** A succeeded job's file. */
export async function readVideoFile(
  userId: string,
  id: string,
): Promise<{ mimeType: string; data: Uint8Array }> {
  const [row] = isUuid(id)
    ? await sql().query<{ result: VideoJobResult | null; video: Uint8Array | null }>(
        `SELECT result, video FROM video_jobs WHERE id = $1::uuid AND user_id = $2::uuid AND status = 'succeeded'`,
        [id, userId],
      )
    : [];
  if (!row?.video || !row.result) throw new NotFoundError('Video');
  return { mimeType: row.result.mimeType, data: row.video };
}
