import { describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { createRuntime } from '../src/runtime.ts';
import { useTestApp } from './support/app.ts';
import { say } from './support/chat.ts';
import { createGate, signUpUser } from './support/factories.ts';

const app = useTestApp();

describe('log durability', () => {
  it('writes every queued log entry, and the spending it holds, when the runtime closes', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    // A runtime of its own over the harness database, so that closing it ends nothing else.
    const runtime = createRuntime(app.config);
    const gateway = createApp(app.config, runtime);
    const N = 300;
    const responses = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        gateway.request('/v3/chat', {
          method: 'POST',
          headers: { ...user.auth, 'content-type': 'application/json' },
          body: JSON.stringify({ gateId: gate.id, data: { messages: say(`entry ${i}`) } }),
        }),
      ),
    );
    let cost = 0;
    for (const res of responses) {
      expect(res.status).toBe(200);
      cost += ((await res.json()) as { costUsd: number }).costUsd;
    }
    // The answers came back before their entries were written: close() is what writes them.
    expect(runtime.logs.stats().queued).toBeGreaterThan(0);

    await runtime.close();

    const entries = await app.db.prisma.logEntry.findMany({
      where: { gateId: gate.id },
      select: { id: true },
    });
    expect(entries).toHaveLength(N);
    expect(new Set(entries.map((e) => e.id)).size).toBe(N);
    // Costs of a gate without a limit wait in memory for a timed flush; close writes them too.
    const stored = await app.db.prisma.gate.findUniqueOrThrow({ where: { id: gate.id } });
    expect(Number(stored.spendingCurrent)).toBeCloseTo(cost, 8);
  });

  it('refuses entries once closed rather than dropping them silently', async () => {
    const runtime = createRuntime(app.config);
    await runtime.close();
    await expect(runtime.logs.add({} as never)).rejects.toThrow(/closed/);
  });
});
