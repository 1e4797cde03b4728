/**
 * Group commit (dataplane/groupCommit.ts), the statement-per-batch queue that a gate's, a key's
 * and an end user's counters go through on PostgreSQL. `run` stands for the statement: it records
 * the batches it is given.
 */
import { expect, it } from 'vitest';
import { groupCommit } from '../src/dataplane/groupCommit.ts';

function recorder() {
  const batches: string[][] = [];
  let release: () => void = () => {};
  let hold = false;
  const step = groupCommit<string, string>(async (row, calls) => {
    batches.push([row, ...calls]);
    if (hold) await new Promise<void>((r) => (release = r));
    return calls.map((c) => `${c} done`);
  });
  return {
    step,
    batches,
    holdNext: () => {
      hold = true;
    },
    release: () => {
      hold = false;
      release();
    },
  };
}

const turn = () => new Promise((r) => setImmediate(r));

it('sends a settlement that lingers on an idle row with the reservation that follows it, in one statement and in order', async () => {
  const { step, batches } = recorder();
  const settled = step('gate-a', 'settle 1', { linger: true });
  await turn();
  // Nothing has run yet: the settlement waits for company.
  expect(batches).toEqual([]);
  const reserved = step('gate-a', 'reserve 2');
  expect(await Promise.all([settled, reserved])).toEqual(['settle 1 done', 'reserve 2 done']);
  expect(batches).toEqual([['gate-a', 'settle 1', 'reserve 2']]);
});

it('runs a settlement that lingers alone once nothing comes, and never delays a call made without linger', async () => {
  const { step, batches } = recorder();
  expect(await step('gate-a', 'settle 1', { linger: true })).toBe('settle 1 done');
  const reserved = step('gate-b', 'reserve 1');
  // Started at once: the statement has been given its batch before this turn ends.
  expect(batches).toEqual([
    ['gate-a', 'settle 1'],
    ['gate-b', 'reserve 1'],
  ]);
  await reserved;
  // Another row's call neither waits for nor joins a lingering one.
  const lingering = step('gate-a', 'settle 2', { linger: true });
  await step('gate-b', 'reserve 2');
  await lingering;
  expect(batches.slice(2)).toEqual([
    ['gate-b', 'reserve 2'],
    ['gate-a', 'settle 2'],
  ]);
});

it('lets a busy row take a lingering call with the next batch, without waiting', async () => {
  const { step, batches, holdNext, release } = recorder();
  holdNext();
  const first = step('gate-a', 'reserve 1');
  await turn();
  const settled = step('gate-a', 'settle 1', { linger: true });
  const reserved = step('gate-a', 'reserve 2');
  release();
  await Promise.all([first, settled, reserved]);
  expect(batches).toEqual([
    ['gate-a', 'reserve 1'],
    ['gate-a', 'settle 1', 'reserve 2'],
  ]);
});
