import { expect, it } from 'vitest';
import { profilingArgs } from '../src/db/pgliteThread.ts';

it('passes a profiled process’s --cpu-prof on to the database thread, in either spelling, and never its file name', () => {
  expect(
    profilingArgs([
      '--enable-source-maps',
      '--cpu-prof',
      '--cpu-prof-dir',
      '/tmp/profiles',
      '--cpu-prof-interval=250',
      '--cpu-prof-name=gateway.cpuprofile',
    ]),
  ).toEqual(['--cpu-prof', '--cpu-prof-dir=/tmp/profiles', '--cpu-prof-interval=250']);
  expect(profilingArgs(['--cpu-prof', '--cpu-prof-dir=/tmp/a=b'])).toEqual([
    '--cpu-prof',
    '--cpu-prof-dir=/tmp/a=b',
  ]);
  expect(profilingArgs(['--enable-source-maps', '--heap-growing-percent=100'])).toEqual([]);
});
