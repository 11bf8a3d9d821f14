/**
 * The long-lived supervisor of `Service` resources with driver `process` (the agent holds one):
 * starts processes with their output in log files, restarts them with exponential backoff when they
 * exit, stops them with SIGTERM then SIGKILL, rotates their logs, and keeps a pid file per service so
 * that a new agent process ADOPTS a process the previous one started instead of starting a duplicate.
 */
import type { ChildProcess } from 'node:child_process';
import { Backoff, realClock } from '../../api/meta/clock.ts';
import type { RestartPolicy } from '../../api/v1alpha1/generated/host-resource.ts';
import { logPath, rotateLog } from './log-file.ts';
import { currentBootId, deleteRecord, isSameProcess, readRecord, writeRecord } from './process-record.ts';
import { spawnService } from './process-spawn.ts';
import {
  DEFAULT_BACKOFF,
  type ProcessPhase,
  type ProcessSpec,
  type ProcessStatus,
  type ProcessSupervisor,
  type ProcessSupervisorOptions,
} from './process-types.ts';

export * from './process-types.ts';

interface Entry {
  id: string;
  spec: ProcessSpec;
  phase: ProcessPhase;
  child?: ChildProcess;
  pid?: number;
  startTime: string;
  adopted: boolean;
  startedAtMs: number;
  /** Restart delays; reset once the process stayed up `resetAfterMs`. */
  backoff: Backoff;
  restarts: number;
  timer?: unknown;
  lastExit?: ProcessStatus['lastExit'];
  writes: Promise<void>;
}

/** Creates the process supervisor (see the module comment for what it guarantees). */
export function createProcessSupervisor(opts: ProcessSupervisorOptions): ProcessSupervisor {
  const timings = { ...DEFAULT_BACKOFF, ...opts.backoff };
  const clock = opts.clock ?? realClock;
  const { stateDir, logger } = opts;
  const baseEnv = opts.baseEnv ?? { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' };
  const entries = new Map<string, Entry>();
  let closed = false;

  const status = (e: Entry): ProcessStatus => ({
    id: e.id,
    phase: e.phase,
    pid: e.pid,
    fingerprint: e.spec.fingerprint,
    adopted: e.adopted,
    restarts: e.restarts,
    lastExit: e.lastExit,
  });

  const alive = (e: Entry): boolean =>
    e.child
      ? e.child.exitCode === null && e.child.signalCode === null
      : e.pid !== undefined && isSameProcess(e.pid, e.startTime);

  /** Queues a pid-file write; the returned promise rejects on failure (the queue itself never does). */
  function persist(e: Entry): Promise<void> {
    const write = e.writes.then(() =>
      writeRecord(stateDir, {
        id: e.id,
        pid: e.pid ?? 0,
        startTime: e.startTime,
        bootId: currentBootId(),
        command: e.spec.command,
        env: e.spec.env,
        cwd: e.spec.cwd,
        root: e.spec.root,
        restart: e.spec.restart,
        fingerprint: e.spec.fingerprint,
        startedAt: new Date(e.startedAtMs).toISOString(),
        exited: e.phase === 'exited' ? e.lastExit : undefined,
      }),
    );
    e.writes = write.catch((err: unknown) =>
      logger.error('Failed to write pid file', { id: e.id, error: String(err) }),
    );
    return write;
  }

  async function start(e: Entry): Promise<void> {
    e.startedAtMs = clock.now();
    const { child, pid, startTime } = await spawnService({ stateDir, id: e.id, spec: e.spec, baseEnv });
    child.on('error', (err) => logger.error('Failed to signal service process', { id: e.id, error: err.message }));
    child.on('exit', (code, signal) => {
      if (!closed && entries.get(e.id) === e && e.child === child) onExit(e, code, signal);
    });
    Object.assign(e, { child, pid, startTime, adopted: false, phase: 'running' });
    try {
      await persist(e);
    } catch (err) {
      child.removeAllListeners('exit');
      child.kill('SIGKILL');
      Object.assign(e, { child: undefined, pid: undefined });
      throw new Error(
        `started ${e.id} but could not record its pid file, so stopped it again: ${(err as Error).message}`,
      );
    }
    logger.info('Started service process', { id: e.id, pid, command: e.spec.command });
  }

  function onExit(e: Entry, code: number | null, signal: string | null): void {
    Object.assign(e, {
      child: undefined,
      pid: undefined,
      lastExit: { code, signal, at: new Date(clock.now()).toISOString() },
    });
    if (e.phase === 'stopping') return;
    if (shouldStayDown(e.spec.restart, code)) {
      e.phase = 'exited';
      persist(e).catch(() => {});
      logger.info('Exited service process', { id: e.id, code, signal, restart: e.spec.restart });
      return;
    }
    if (clock.now() - e.startedAtMs >= timings.resetAfterMs) e.backoff.reset();
    const delay = e.backoff.next();
    e.phase = 'backoff';
    e.timer = clock.setTimeout(() => void restart(e), delay);
    logger.info('Exited service process', { id: e.id, code, signal, restartInMs: delay });
  }

  async function restart(e: Entry): Promise<void> {
    if (closed || e.phase !== 'backoff' || entries.get(e.id) !== e) return;
    e.restarts += 1;
    try {
      await start(e);
    } catch (err) {
      logger.error('Failed to restart service process', { id: e.id, error: (err as Error).message });
      onExit(e, null, null);
    }
  }

  const newEntry = (id: string, spec: ProcessSpec): Entry => ({
    id,
    spec,
    phase: 'running',
    startTime: '',
    adopted: false,
    startedAtMs: 0,
    restarts: 0,
    writes: Promise.resolve(),
    backoff: new Backoff({ baseMs: timings.initialMs, maxMs: timings.maxMs }),
  });

  async function adopt(id: string): Promise<Entry | undefined> {
    const rec = await readRecord(stateDir, id);
    if (!rec) return undefined;
    const { command, env, cwd, root, restart: policy, fingerprint } = rec;
    const e = newEntry(id, { command, env, cwd, root, restart: policy, fingerprint });
    e.startedAtMs = Date.parse(rec.startedAt) || clock.now();
    if (rec.exited) {
      Object.assign(e, { phase: 'exited', lastExit: rec.exited });
    } else if (isSameProcess(rec.pid, rec.startTime, rec.bootId)) {
      Object.assign(e, { phase: 'running', pid: rec.pid, startTime: rec.startTime, adopted: true });
      logger.info('Adopted service process', { id, pid: rec.pid });
    } else {
      logger.info('Discarded stale pid file', { id, pid: rec.pid });
      await deleteRecord(stateDir, id);
      return undefined;
    }
    entries.set(id, e);
    return e;
  }

  /**
   * Stops a service and everything it started: each service leads its own process group (see
   * process-spawn.ts), so the signals go to the group, and the group must be empty before it counts as stopped.
   */
  async function terminate(e: Entry, graceMs: number): Promise<void> {
    if (e.pid === undefined || !(e.child || alive(e))) return;
    const group = e.pid;
    signalGroup(group, 'SIGTERM');
    if (await waitUntil(() => !groupAlive(group), graceMs)) return;
    signalGroup(group, 'SIGKILL');
    if (!(await waitUntil(() => !groupAlive(group), 5000)))
      throw new Error(`service ${e.id} (process group ${group}) did not exit after SIGKILL`);
  }

  async function stop(id: string): Promise<void> {
    const e = entries.get(id) ?? (await adopt(id));
    if (e) {
      if (e.timer !== undefined) clock.clearTimeout(e.timer);
      e.phase = 'stopping';
      const pid = e.pid;
      if (alive(e)) await terminate(e, opts.stopGraceMs ?? 10_000);
      entries.delete(id);
      await e.writes;
      logger.info('Stopped service process', { id, pid });
    }
    await deleteRecord(stateDir, id);
  }

  async function poll(): Promise<void> {
    for (const e of entries.values()) {
      if (e.phase === 'running' && e.adopted && !alive(e)) onExit(e, null, null);
      if (e.phase !== 'stopping') {
        await rotateLog(logPath(stateDir, e.id), opts.logMaxBytes ?? 10 * 1024 * 1024).catch((err: unknown) =>
          logger.error('Failed to rotate log', { id: e.id, error: String(err) }),
        );
      }
    }
  }
  let poller = clock.setTimeout(function next() {
    void poll().finally(() => {
      if (!closed) poller = clock.setTimeout(next, opts.pollMs ?? 1000);
    });
  }, opts.pollMs ?? 1000);

  return {
    async ensure(id, spec) {
      const e = entries.get(id) ?? (await adopt(id));
      if (e && e.phase !== 'stopping' && e.spec.fingerprint === spec.fingerprint) return status(e);
      if (e) await stop(id);
      const n = newEntry(id, spec);
      entries.set(id, n);
      try {
        await start(n);
      } catch (err) {
        entries.delete(id);
        throw err;
      }
      return status(n);
    },
    async inspect(id) {
      const e = entries.get(id) ?? (await adopt(id));
      return e ? status(e) : undefined;
    },
    stop,
    async stopAll() {
      await Promise.all([...entries.keys()].map((id) => stop(id)));
    },
    close() {
      closed = true;
      clock.clearTimeout(poller);
      for (const e of entries.values()) if (e.timer !== undefined) clock.clearTimeout(e.timer);
    },
  };
}

function shouldStayDown(policy: RestartPolicy, code: number | null): boolean {
  return policy === 'never' || (policy === 'on-failure' && code === 0);
}

async function waitUntil(cond: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/** Sends `sig` to a process group (absent is fine). */
function signalGroup(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    /* already gone */
  }
}

/** Whether any process of the group is still alive. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
