/**
 * Scheduled re-analysis and auto-apply (architectJobs.ts): each due gate once per period, however
 * many runs look at the same time; auto-apply only past the margin, recorded as a version.
 */
import { AUTO_APPLY_MARGIN, type TaskAnalysis } from '@gatehouse/rules/architect';
import { describe, expect, it } from 'vitest';
import { prisma } from '../src/db/client.ts';
import { runDueAnalyses, shouldApply } from '../src/domain/architectJobs.ts';
import { GateChangedMeanwhile, updateGate } from '../src/domain/gates.ts';
import { databaseKind, useTestApp } from './support/app.ts';
import { createGate, signUpUser } from './support/factories.ts';

const app = useTestApp();
const deps = () => ({ ...app.runtime.architect, spending: app.runtime.spending });
const DAY_MS = 86_400_000;

const jobsOf = (gateId: string) =>
  prisma.architectJob.findMany({ where: { gateId }, orderBy: { periodStart: 'asc' } });

function analysis(scores: [string, number, string?][], primary: string): TaskAnalysis {
  return {
    primary,
    scores: scores.map(([model, total, excludedBecause]) => ({
      model,
      total,
      ...(excludedBecause && { excludedBecause }),
    })),
  } as unknown as TaskAnalysis;
}

describe('auto-apply', () => {
  it('changes the models only when the new primary beats the current one by the margin', () => {
    expect(
      shouldApply(
        analysis(
          [
            ['a/new', 0.8],
            ['b/old', 0.8 - AUTO_APPLY_MARGIN / 2],
          ],
          'a/new',
        ),
        'b/old',
      ),
    ).toBe(false);
    expect(
      shouldApply(
        analysis(
          [
            ['a/new', 0.8],
            ['b/old', 0.8 - AUTO_APPLY_MARGIN],
          ],
          'a/new',
        ),
        'b/old',
      ),
    ).toBe(true);
    expect(
      shouldApply(
        analysis(
          [
            ['a/new', 0.8],
            ['b/old', 0.9, 'over the cap'],
          ],
          'a/new',
        ),
        'b/old',
      ),
    ).toBe(true);
    expect(shouldApply(analysis([['b/old', 0.8]], 'b/old'), 'b/old')).toBe(false);
  });
});

describe('scheduled re-analysis', () => {
  it('runs each due gate once per period, applies a better choice once, and records it as the Architect’s version', async () => {
    const user = await signUpUser(app);
    const auto = await createGate(app, user, {
      model: 'mock/smart',
      analysisMethod: 'cost',
      reanalysisPeriod: 'daily',
      autoApplyRecommendations: true,
    });
    const reviewOnly = await createGate(app, user, {
      model: 'mock/smart',
      analysisMethod: 'cost',
      reanalysisPeriod: 'weekly',
    });
    const never = await createGate(app, user, { model: 'mock/smart', analysisMethod: 'cost' });
    const now = new Date('2026-11-24T10:00:00Z');

    // Two runs at once (two processes' schedulers): each gate's job is claimed by one of them.
    const [a, b] = await Promise.all([runDueAnalyses(deps(), now), runDueAnalyses(deps(), now)]);
    expect(a.failed + b.failed).toBe(0);
    expect(await jobsOf(auto.id)).toHaveLength(1);
    expect(await jobsOf(reviewOnly.id)).toHaveLength(1);
    expect(await jobsOf(never.id)).toHaveLength(0);
    const [job] = await jobsOf(auto.id);
    expect(job).toMatchObject({
      status: 'done',
      applied: true,
      previousModel: 'mock/smart',
      recommendedModel: 'mock/fast',
      periodStart: new Date('2026-11-24T00:00:00Z'),
    });

    const autoGate = await prisma.gate.findUniqueOrThrow({ where: { id: auto.id } });
    expect(autoGate.model).toBe('mock/fast');
    expect((autoGate.taskAnalysis as unknown as TaskAnalysis).primary).toBe('mock/fast');
    const versions = await prisma.gateVersion.findMany({
      where: { gateId: auto.id },
      orderBy: { version: 'asc' },
    });
    expect(versions.map((v) => v.changedBy)).toEqual(['user', 'architect']);
    expect(versions[1]?.changedFields).toEqual(expect.arrayContaining(['model']));

    // Without auto-apply the analysis is stored and the gate keeps its model.
    const reviewed = await prisma.gate.findUniqueOrThrow({ where: { id: reviewOnly.id } });
    expect(reviewed.model).toBe('mock/smart');
    expect((reviewed.taskAnalysis as unknown as TaskAnalysis).primary).toBe('mock/fast');

    // Later the same day: nothing is due. The next day: due again, and nothing better to apply.
    await runDueAnalyses(deps(), new Date(now.getTime() + 3_600_000));
    expect(await jobsOf(auto.id)).toHaveLength(1);
    await runDueAnalyses(deps(), new Date(now.getTime() + DAY_MS));
    const jobs = await jobsOf(auto.id);
    expect(jobs).toHaveLength(2);
    expect(jobs[1]).toMatchObject({ status: 'done', applied: false, previousModel: 'mock/fast' });
    expect(await prisma.gateVersion.count({ where: { gateId: auto.id } })).toBe(2);
    // The weekly gate waits for its next week (2026-11-30 is a Monday).
    expect(await jobsOf(reviewOnly.id)).toHaveLength(1);
    await runDueAnalyses(deps(), new Date('2026-11-30T00:30:00Z'));
    expect(await jobsOf(reviewOnly.id)).toHaveLength(2);
  });

  it('refuses the Architect’s change, writing nothing, to a gate changed since the analysis read it', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/smart', autoApplyRecommendations: true });
    const analysed = await prisma.gate.findUniqueOrThrow({ where: { id: gate.id } });
    // The owner's change lands between the analysis and the apply.
    const patched = await app.request(`/v1/gates/${gate.id}`, {
      method: 'PATCH',
      headers: user.auth,
      json: { fallbackModels: ['mock/echo'] },
    });
    expect(patched.status).toBe(200);

    const apply = updateGate(
      user.id,
      gate.id,
      { model: 'mock/fast', fallbackModels: [] },
      deps(),
      { kind: 'architect' },
      (current) => current.fallbackModels.join() === analysed.fallbackModels.join(),
    );
    await expect(apply).rejects.toBeInstanceOf(GateChangedMeanwhile);
    const now = await prisma.gate.findUniqueOrThrow({ where: { id: gate.id } });
    expect(now).toMatchObject({ model: 'mock/smart', fallbackModels: ['mock/echo'] });
    const versions = await prisma.gateVersion.findMany({ where: { gateId: gate.id } });
    expect(versions.map((v) => v.changedBy).sort()).toEqual(['user', 'user']);
  });

  // PostgreSQL: a row lock held by another connection. (PGlite has one connection: transactions
  // take turns, so nothing can change a row while the apply holds it.)
  it.runIf(databaseKind === 'postgres')(
    'holds the Architect’s check against the locked row: an owner’s change committed while the apply waited for the lock wins',
    async () => {
      const user = await signUpUser(app);
      const gate = await createGate(app, user, { model: 'mock/smart', autoApplyRecommendations: true });
      let apply: Promise<unknown> = Promise.resolve();
      await prisma.$transaction(
        async (tx) => {
          // The owner's change, not yet committed: the gate as read outside this transaction has
          // no fallbacks still, so a check of that read would let the apply through.
          const [mine] = await tx.$queryRaw<{ xid: string }[]>`SELECT pg_current_xact_id()::xid::text AS xid`;
          await tx.gate.update({ where: { id: gate.id }, data: { fallbackModels: ['mock/echo'] } });
          apply = updateGate(
            user.id,
            gate.id,
            { model: 'mock/fast' },
            deps(),
            { kind: 'architect' },
            (current) => current.fallbackModels.length === 0,
          );
          apply.catch(() => {});
          // Commit only once the apply waits for this transaction's row lock.
          for (let waited = 0; ; waited += 20) {
            const [waiting] = await prisma.$queryRaw<{ n: number }[]>`
              SELECT count(*)::int AS n FROM pg_locks
              WHERE locktype = 'transactionid' AND NOT granted AND transactionid::text = ${mine?.xid}`;
            if ((waiting?.n ?? 0) > 0) break;
            if (waited > 5000) throw new Error('the apply never waited for the lock');
            await new Promise((r) => setTimeout(r, 20));
          }
        },
        { timeout: 10_000 },
      );
      await expect(apply).rejects.toBeInstanceOf(GateChangedMeanwhile);
      const now = await prisma.gate.findUniqueOrThrow({ where: { id: gate.id } });
      expect(now).toMatchObject({ model: 'mock/smart', fallbackModels: ['mock/echo'] });
      expect(await prisma.gateVersion.count({ where: { gateId: gate.id, changedBy: 'architect' } })).toBe(0);
    },
  );

  it('takes over a job whose process died while running it, and leaves a slow process nothing to finish', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/smart', reanalysisPeriod: 'monthly' });
    const now = new Date();
    const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    // Claimed an hour ago by a process that never came back.
    await prisma.architectJob.create({
      data: { gateId: gate.id, userId: user.id, periodStart, claimedAt: new Date(now.getTime() - 3_600_000) },
    });
    await runDueAnalyses(deps(), now);
    const [job] = await jobsOf(gate.id);
    expect(job).toMatchObject({ status: 'done', tries: 2 });
  });

  it('retries a failed job after a while, within its period', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/smart', reanalysisPeriod: 'daily' });
    const now = new Date();
    const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    await prisma.architectJob.create({
      data: {
        gateId: gate.id,
        userId: user.id,
        periodStart,
        status: 'failed',
        error: 'the database went away',
        claimedAt: new Date(now.getTime() - 3_600_000),
        finishedAt: new Date(now.getTime() - 3_600_000),
      },
    });
    await runDueAnalyses(deps(), now);
    const [job] = await jobsOf(gate.id);
    expect(job).toMatchObject({ status: 'done', tries: 2, error: null });
  });
});
