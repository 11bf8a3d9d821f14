/**
 * Starts one service process for the supervisor: checks its working directory (inside the root, now), opens its log file
 * as stdout/stderr, spawns it (not detached: it stays in the agent's process group) and reads its
 * /proc start time, which with the pid identifies it for adoption after an agent restart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { openLog } from './log-file.ts';
import { procStat } from './process-record.ts';
import type { ProcessSpec } from './process-types.ts';
import { assertResolvesInsideRoot } from './resolve-under-root.ts';
import { errnoCode } from '../../api/meta/errno.ts';

/** A process that was just started. */
export interface Spawned {
  child: ChildProcess;
  pid: number;
  startTime: string;
}

async function assertDirectory(cwd: string): Promise<void> {
  try {
    if (!(await stat(cwd)).isDirectory()) throw new Error(`working directory ${cwd} is not a directory`);
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') throw new Error(`working directory ${cwd} does not exist`);
    throw e;
  }
}

/** Spawns a service process with its output appended to its log file; rejects when it cannot start. */
export async function spawnService(opts: {
  stateDir: string;
  id: string;
  spec: ProcessSpec;
  baseEnv: Record<string, string>;
}): Promise<Spawned> {
  const { spec } = opts;
  const [file, ...args] = spec.command;
  if (file === undefined || file === '') throw new Error('Service command must not be empty');
  if (spec.root !== undefined) assertResolvesInsideRoot(spec.root, spec.cwd);
  await assertDirectory(spec.cwd);
  const fd = await openLog(opts.stateDir, opts.id, `starting ${JSON.stringify(spec.command)}`);
  let child: ChildProcess;
  try {
    // detached: the service leads its own session and process group, so that stopping it stops what it
    // started too (terminate signals the group), and a Ctrl-C meant for the agent does not reach it.
    child = spawn(file, args, {
      cwd: spec.cwd,
      env: { ...opts.baseEnv, ...spec.env },
      stdio: ['ignore', fd, fd],
      detached: true,
    });
  } finally {
    closeSync(fd);
  }
  const failed = new Promise<Error>((resolve) => child.once('error', resolve));
  if (child.pid === undefined) throw new Error(`could not start ${JSON.stringify(file)}: ${(await failed).message}`);
  child.unref();
  return { child, pid: child.pid, startTime: procStat(child.pid)?.startTime ?? '' };
}
