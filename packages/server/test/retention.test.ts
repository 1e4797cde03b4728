import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { purgeExpiredLogs } from '../src/domain/retention.ts';
import { useTestApp } from './support/app.ts';
import { createGate, signUpUser } from './support/factories.ts';

const app = useTestApp();
const DAY_MS = 86_400_000;

async function entryAt(userId: string, gateId: string, daysAgo: number) {
  const createdAt = new Date(Date.now() - daysAgo * DAY_MS);
  const id = randomUUID();
  await app.db.prisma.logEntry.create({
    data: {
      id,
      userId,
      gateId,
      gateName: 'g',
      endpoint: '/v3/chat',
      success: true,
      statusCode: 200,
      createdAt,
    },
  });
  await app.db.prisma.logRollup.create({
    data: {
      userId,
      gateId,
      hour: new Date(Math.floor(createdAt.getTime() / 3_600_000) * 3_600_000),
      requests: 1,
    },
  });
  return id;
}

describe('log retention', () => {
  it('deletes entries and hourly totals older than the plan keeps, and nothing younger', async () => {
    const free = await signUpUser(app);
    const pro = await signUpUser(app);
    // The file's first account is the admin, on enterprise: each plan is set here, not assumed.
    await app.db.prisma.user.update({ where: { id: free.id }, data: { plan: 'free' } });
    await app.db.prisma.user.update({ where: { id: pro.id }, data: { plan: 'pro' } });
    const freeGate = await createGate(app, free);
    const proGate = await createGate(app, pro);
    const freeOld = await entryAt(free.id, freeGate.id, 31);
    const freeYoung = await entryAt(free.id, freeGate.id, 29);
    const proOld = await entryAt(pro.id, proGate.id, 31);

    await purgeExpiredLogs();

    const left = await app.db.prisma.logEntry.findMany({
      where: { id: { in: [freeOld, freeYoung, proOld] } },
    });
    expect(left.map((e) => e.id).sort()).toEqual([freeYoung, proOld].sort());
    expect(await app.db.prisma.logRollup.count({ where: { userId: free.id } })).toBe(1);
    expect(await app.db.prisma.logRollup.count({ where: { userId: pro.id } })).toBe(1);
  });

  it('deletes video jobs, videos and all, older than the plan keeps, and nothing younger', async () => {
    const free = await signUpUser(app);
    const pro = await signUpUser(app);
    await app.db.prisma.user.update({ where: { id: free.id }, data: { plan: 'free' } });
    await app.db.prisma.user.update({ where: { id: pro.id }, data: { plan: 'pro' } });
    const job = async (userId: string, daysAgo: number) => {
      const createdAt = new Date(Date.now() - daysAgo * DAY_MS);
      const { id } = await app.db.prisma.videoJob.create({
        data: {
          id: randomUUID(),
          userId,
          gateId: randomUUID(),
          status: 'succeeded',
          video: Buffer.alloc(1024, 7),
          deadline: createdAt,
          createdAt,
        },
      });
      return id;
    };
    const freeOld = await job(free.id, 31);
    const freeYoung = await job(free.id, 29);
    const proOld = await job(pro.id, 31);

    const purged = await purgeExpiredLogs();

    expect(purged.videoJobs).toBe(1);
    const left = await app.db.prisma.videoJob.findMany({
      where: { id: { in: [freeOld, freeYoung, proOld] } },
      select: { id: true },
    });
    expect(left.map((j) => j.id).sort()).toEqual([freeYoung, proOld].sort());
  });

  it('holds a user on a plan it does not know to the free plan', async () => {
    const user = await signUpUser(app);
    await app.db.prisma.user.update({ where: { id: user.id }, data: { plan: 'legacy' } });
    const gate = await createGate(app, user);
    const old = await entryAt(user.id, gate.id, 45);
    await purgeExpiredLogs();
    expect(await app.db.prisma.logEntry.findUnique({ where: { id: old } })).toBeNull();
  });
});
