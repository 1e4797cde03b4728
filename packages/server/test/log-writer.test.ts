import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { createLogWriter } from '../src/dataplane/logWriter.ts';
import { useTestApp } from './support/app.ts';
import { createGate, signUpUser } from './support/factories.ts';

const app = useTestApp();

it('keeps entries queued while the log table cannot be written, and writes them all once it can', async () => {
  const user = await signUpUser(app);
  const gate = await createGate(app, user);
  const writer = createLogWriter({ intervalMs: 20 });
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  // Not a problem with the entries themselves: the table is away (as in an outage).
  await app.db.driver.exec('ALTER TABLE log_entries RENAME TO log_entries_away');
  try {
    for (const id of ids) {
      await writer.add({
        id,
        userId: user.id,
        gateId: gate.id,
        gateName: gate.name,
        endpoint: '/v3/chat',
        success: true,
        statusCode: 200,
      });
    }
    await new Promise((r) => setTimeout(r, 250));
    expect(writer.stats()).toMatchObject({ queued: 3, written: 0 });
  } finally {
    await app.db.driver.exec('ALTER TABLE log_entries_away RENAME TO log_entries');
  }
  await writer.close();
  const stored = await app.db.prisma.logEntry.findMany({ where: { id: { in: ids } }, select: { id: true } });
  expect(stored.map((e) => e.id).sort()).toEqual([...ids].sort());
});
