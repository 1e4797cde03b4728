/**
 * A small filesystem of a test file's own, to fill: a tmpfs mounted for it (mounting needs root,
 * which CI has), and a filler file that takes all its room, or all but a chosen part.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';

export const canMount = process.getuid?.() === 0;

/** Mounts `sizeMb` of tmpfs before the file's tests (register it before what goes on it) and unmounts it after. */
export function useSmallDisk(sizeMb: number) {
  const dir = path.join(os.tmpdir(), `gatehouse-disk-${randomUUID()}`);
  const filler = path.join(dir, 'filler');
  let mounted = false;
  beforeAll(() => {
    fs.mkdirSync(dir);
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir]);
    mounted = true;
  });
  afterAll(() => {
    if (mounted) execFileSync('umount', ['--lazy', dir]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir,
    /** The bytes free. */
    free(): number {
      const s = fs.statfsSync(dir);
      return s.bavail * s.bsize;
    },
    /** Fills the disk but for `leave` bytes (more filler when it has some already). */
    fill(leave = 0): void {
      const fd = fs.openSync(filler, 'a');
      const chunk = Buffer.alloc(1024 * 1024, 1);
      try {
        for (;;) fs.writeSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      } finally {
        fs.closeSync(fd);
      }
      if (leave > 0) fs.truncateSync(filler, Math.max(0, fs.statSync(filler).size - leave));
    },
    /** Gives the filler's room back. */
    unfill(): void {
      fs.rmSync(filler, { force: true });
    },
  };
}
