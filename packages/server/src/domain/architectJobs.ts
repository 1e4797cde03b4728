/**
 * Scheduled re-analysis: every gate whose reanalysisPeriod is daily, weekly or monthly is
 * analysed once in each such UTC period (day, ISO week from Monday, month), by whichever gateway
 * process claims it first. A claim is the insert of the period's architect_jobs row, which the
 * (gate, period) unique key admits once: no two processes run the same job, on PGlite or
 * PostgreSQL alike. A job whose process died while running is taken again after
 * STALE_AFTER_MS, a failed one after RETRY_AFTER_MS, three tries in all; each try works only
 * while it still holds the job (its try number), so a process that was merely slow never
 * finishes or applies a job another has taken over.
 *
 * With autoApplyRecommendations, the gate's primary and fallbacks become the recommendation's
 * only when it scores better than the current primary by AUTO_APPLY_MARGIN (no flapping between
 * near-equals), through updateGate, which records the change as a version by the Architect.
 */
import { AUTO_APPLY_MARGIN, type TaskAnalysis } from '@gatehouse/rules/architect';
import { prisma, sql } from '../db/client.ts';
import type { Gate, Prisma } from '../generated/prisma/client.ts';
import { type ArchitectDeps, analyseStoredGate, storeAnalysis } from './architect.ts';
import { NotFoundError } from './errors.ts';
import { GateChangedMeanwhile, type GateDeps, updateGate } from './gates.ts';

const STALE_AFTER_MS = 15 * 60_000;
const RETRY_AFTER_MS = 5 * 60_000;
const MAX_TRIES = 3;
const BATCH = 20;

const PERIOD_START = `date_trunc(CASE g.reanalysis_period WHEN 'daily' THEN 'day' WHEN 'weekly' THEN 'week' ELSE 'month' END,
  $1::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`;

/**
 * Inserts this period's job for up to `limit` due gates; the rows inserted are this process's.
 * $1 says which period is due (the run's time); claims are stamped with the database's clock.
 */
const CLAIM_DUE = `INSERT INTO architect_jobs (id, gate_id, user_id, period_start, claimed_at)
  SELECT gen_random_uuid(), g.id, g.user_id, ${PERIOD_START}, clock_timestamp()
  FROM gates g
  WHERE g.reanalysis_period IN ('daily', 'weekly', 'monthly')
    AND NOT EXISTS (SELECT 1 FROM architect_jobs j WHERE j.gate_id = g.id AND j.period_start = ${PERIOD_START})
  ORDER BY g.id
  LIMIT $2
  ON CONFLICT (gate_id, period_start) DO NOTHING
  RETURNING id, gate_id, tries`;

/**
 * Takes over a running job whose process has not touched it for STALE_AFTER_MS (it died), and
 * retries a failed one after RETRY_AFTER_MS, each up to MAX_TRIES in all.
 */
const CLAIM_AGAIN = `UPDATE architect_jobs SET status = 'running', claimed_at = clock_timestamp(), tries = tries + 1,
    finished_at = NULL, error = NULL
  WHERE id IN (
    SELECT id FROM architect_jobs
    WHERE tries < ${MAX_TRIES} AND (
      (status = 'running' AND claimed_at < clock_timestamp() - make_interval(secs => $2::float8 / 1000))
      OR (status = 'failed' AND finished_at < clock_timestamp() - make_interval(secs => $3::float8 / 1000)))
    ORDER BY claimed_at LIMIT $1 FOR UPDATE SKIP LOCKED)
  RETURNING id, gate_id, tries`;

/**
 * Whether this process still holds the job (the try it claimed), stamping it as alive: a job
 * another process has taken over meanwhile is left to that one.
 */
const STILL_OURS = `UPDATE architect_jobs SET claimed_at = clock_timestamp()
  WHERE id = $1::uuid AND tries = $2 AND status = 'running' RETURNING id`;

type Claim = { id: string; gate_id: string; tries: number };

/** What an analysis read of its gate, and auto-apply would change. */
const ANALYSED_SETTINGS = {
  model: true,
  fallbackModels: true,
  routingStrategy: true,
  taskType: true,
  taskSubtype: true,
  description: true,
  analysisMethod: true,
  costWeight: true,
  latencyWeight: true,
  qualityWeight: true,
  maxCostPer1kTokens: true,
  maxLatencyMs: true,
  autoApplyRecommendations: true,
} as const;
const pick = (gate: Gate) =>
  Object.fromEntries(
    Object.keys(ANALYSED_SETTINGS).map((k) => [k, gate[k as keyof typeof ANALYSED_SETTINGS]]),
  );

export type JobsDeps = ArchitectDeps & GateDeps;

export type JobsRun = { ran: number; applied: number; failed: number };

/** Whether `analysis` should replace the gate's models: a better primary by the margin. */
export function shouldApply(analysis: TaskAnalysis, currentModel: string): boolean {
  if (!analysis.primary || analysis.primary === currentModel) return false;
  const score = (model: string) => analysis.scores.find((s) => s.model === model);
  const next = score(analysis.primary)?.total ?? 0;
  const current = score(currentModel);
  // A current model the filters now exclude (or that is gone) is replaced by any that passes.
  if (!current || current.excludedBecause) return true;
  return next >= current.total + AUTO_APPLY_MARGIN;
}

const stillOurs = async (job: Claim) => (await sql().query(STILL_OURS, [job.id, job.tries])).length > 0;

async function runJob(job: Claim, deps: JobsDeps): Promise<'done' | 'applied' | 'failed' | 'lost'> {
  if (!(await stillOurs(job))) return 'lost';
  const finish = (data: Prisma.ArchitectJobUpdateManyMutationInput) =>
    prisma.architectJob.updateMany({ where: { id: job.id, tries: job.tries, status: 'running' }, data });
  try {
    const gate = await prisma.gate.findUnique({ where: { id: job.gate_id } });
    if (!gate) return 'done'; // deleted meanwhile: its job went with it
    const { taskAnalysis } = await analyseStoredGate(
      gate,
      { enableDescriptionEnhancement: false },
      { ...deps, configured: deps.models.configured },
    );
    if (!(await stillOurs(job))) return 'lost';
    await storeAnalysis(gate, taskAnalysis);
    let apply = gate.autoApplyRecommendations && shouldApply(taskAnalysis, gate.model);
    if (apply) {
      // Applied only to the gate that was analysed, checked on the locked row in the change's own
      // transaction: a change its owner made meanwhile wins, however close to this one.
      const analysed = JSON.stringify(pick(gate));
      apply = await updateGate(
        gate.userId,
        gate.id,
        { model: taskAnalysis.primary, fallbackModels: taskAnalysis.fallbacks },
        deps,
        { kind: 'architect' },
        (current) => JSON.stringify(pick(current)) === analysed,
      ).then(
        () => true,
        (error) => {
          if (error instanceof GateChangedMeanwhile || error instanceof NotFoundError) return false;
          throw error;
        },
      );
    }
    await finish({
      status: 'done',
      finishedAt: new Date(),
      applied: apply,
      previousModel: gate.model,
      recommendedModel: taskAnalysis.primary,
    });
    return apply ? 'applied' : 'done';
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).slice(0, 1000);
    console.error('architect: re-analysis of gate', job.gate_id, 'failed:', message);
    await finish({ status: 'failed', finishedAt: new Date(), error: message }).catch(() => {});
    return 'failed';
  }
}

/** Claims and runs the jobs due now (in batches until none is left); what it did. */
export async function runDueAnalyses(deps: JobsDeps, now = new Date()): Promise<JobsRun> {
  const run: JobsRun = { ran: 0, applied: 0, failed: 0 };
  for (;;) {
    const claimed = [
      ...(await sql().query<Claim>(CLAIM_AGAIN, [BATCH, STALE_AFTER_MS, RETRY_AFTER_MS])),
      ...(await sql().query<Claim>(CLAIM_DUE, [now.toISOString(), BATCH])),
    ];
    if (claimed.length === 0) return run;
    for (const job of claimed) {
      const outcome = await runJob(job, deps);
      if (outcome === 'lost') continue;
      run.ran += 1;
      if (outcome === 'applied') run.applied += 1;
      if (outcome === 'failed') run.failed += 1;
    }
  }
}

/** Looks for due re-analyses now and every `intervalMs`; stop() waits for a run under way. */
export function scheduleArchitect(deps: JobsDeps, intervalMs: number) {
  let running: Promise<unknown> = Promise.resolve();
  let busy = false;
  let stopped = false;
  const tick = () => {
    // A run still going when the next is due: that one is skipped, not queued behind it.
    if (stopped || busy) return;
    busy = true;
    running = runDueAnalyses(deps)
      .catch((error) => console.error('architect: scheduled run failed', error))
      .finally(() => {
        busy = false;
      });
  };
  // The first look waits a moment after start, so it never competes with the first requests.
  const first = setTimeout(tick, Math.min(intervalMs, 5_000));
  const timer = setInterval(tick, intervalMs);
  first.unref();
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(timer);
      await running;
    },
  };
}
