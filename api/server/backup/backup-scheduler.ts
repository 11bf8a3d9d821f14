/**
 * Scheduled backups, in the control-plane process, on the injectable clock. Scheduling is on while the Mesh has
 * `spec.backup` (`backup: {}` takes every default): a backup is due once the newest verified one is
 * `interval` old (or there is none); each is taken and verified by the service (backup-service.ts), and only
 * after it verified are the scheduled backups beyond `retention` pruned. A failed backup is retried after
 * RETRY_MS. Every tick also refreshes the Mesh's backup status, whose freshness changes with time alone; ticks
 * come when the next backup is due, when a Backup or the Mesh changes (a deleted Backup, a new spec.backup), and
 * at least every MAX_WAIT_MS.
 */
import { type Clock, type TimerHandle, realClock } from '../../meta/clock.ts';
import type { Logger } from '../../meta/logger.ts';
import type { FileStore } from '../../store/index.ts';
import { backupIntervalMs, backupTime, newestVerified } from './backup-status.ts';
import type { BackupService } from './backup-service.ts';

const RETRY_MS = 5 * 60_000;
const MAX_WAIT_MS = 60_000;

/** Options of `startBackupScheduler`. */
export interface BackupSchedulerOptions {
  service: BackupService;
  store: FileStore;
  logger: Logger;
  clock?: Clock;
}

/** A running scheduler. */
export interface BackupScheduler {
  /** Runs one tick now (tests): refresh, maybe back up and prune; resolves when done. */
  tick(): Promise<void>;
  stop(): void;
}

/** Starts the scheduler: a first tick at once, then on the clock (see the file comment). */
export function startBackupScheduler(o: BackupSchedulerOptions): BackupScheduler {
  const clock = o.clock ?? realClock;
  let timer: TimerHandle | undefined;
  let stopped = false;
  let failedAt: number | undefined;
  let running: Promise<void> = Promise.resolve();

  async function once(): Promise<number> {
    await o.service.refreshMesh();
    const mesh = o.store.get('meshes', 'mesh');
    if (!mesh?.spec?.backup) return MAX_WAIT_MS;
    const interval = backupIntervalMs(mesh);
    const last = newestVerified(o.store);
    const now = clock.now();
    const due = last ? Date.parse(backupTime(last)) + interval : now;
    const retryAt = failedAt === undefined ? now : failedAt + RETRY_MS;
    if (now < Math.max(due, retryAt)) return Math.max(due, retryAt) - now;
    try {
      const b = await o.service.take({ scheduled: true });
      failedAt = undefined;
      await o.service.prune(mesh.spec.backup.retention ?? 7);
      o.logger.info('Took scheduled backup', { name: b.metadata.name });
      return interval;
    } catch (e) {
      failedAt = clock.now();
      o.logger.error('Failed scheduled backup', { error: (e as Error).message, retryInMs: RETRY_MS });
      return RETRY_MS;
    }
  }

  function tick(): Promise<void> {
    running = running.then(async () => {
      if (stopped) return;
      if (timer !== undefined) clock.clearTimeout(timer);
      const wait = await once().catch((e: unknown) => {
        o.logger.error('Failed backup scheduler tick', { error: String(e) });
        return MAX_WAIT_MS;
      });
      if (!stopped) timer = clock.setTimeout(() => void tick(), Math.min(Math.max(wait, 1000), MAX_WAIT_MS));
    });
    return running;
  }

  void tick();
  const rv = o.store.resourceVersion();
  const watches = ['backups', 'meshes'].map((plural) =>
    o.store.watch(plural, { resourceVersion: rv }, (e) => {
      if (e.type !== 'BOOKMARK') void tick();
    }),
  );
  return {
    tick,
    stop() {
      stopped = true;
      for (const w of watches) w.stop();
      if (timer !== undefined) clock.clearTimeout(timer);
    },
  };
}
