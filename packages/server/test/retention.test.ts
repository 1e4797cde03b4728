import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sql } from '../src/db/client.ts';
import { purgeExpiredLogs } from '../src/domain/retention.ts';
import { databaseKind, useTestApp } from './support/app.ts';
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

  // PGlite has no autovacuum: without the purge's VACUUM the deleted entries' room is never used
  // again and the data directory only grows. (PostgreSQL's autovacuum does it there, in its time.)
  it.runIf(databaseKind === 'pglite')(
    'gives the room of the entries it deleted back to new ones on PGlite',
    async () => {
      const user = await signUpUser(app);
      await app.db.prisma.user.update({ where: { id: user.id }, data: { plan: 'free' } });
      const gate = await createGate(app, user);
      const heap = async () =>
        Number((await sql().query<{ n: string }>(`SELECT pg_relation_size('log_entries')::text AS n`))[0]?.n);
      const insert = (daysAgo: number) =>
        sql().query(
          `INSERT INTO log_entries (id, user_id, gate_id, gate_name, endpoint, success, status_code, created_at, provider_request)
           SELECT gen_random_uuid(), $1::uuid, $2::uuid, 'g', '/v3/chat', true, 200,
                  now() - make_interval(days => $3::int), jsonb_build_object('padding', repeat('x', 400) || i)
           FROM generate_series(1, 3000) i`,
          [user.id, gate.id, daysAgo],
        );
      const before = await heap();
      await insert(31);
      const old = (await heap()) - before;

      expect((await purgeExpiredLogs()).entries).toBe(3000);
      await insert(1);

      // Without the VACUUM the young entries took as many new pages again (before + 2 × old).
      expect(old).toBeGreaterThan(1_000_000);
      expect((await heap()) - before).toBeLessThan(old * 1.25);
    },
  );
});
