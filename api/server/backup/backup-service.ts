/**
 * Backups in the control-plane process, over the store it owns (a consistent cut needs the in-memory state:
 * api/backup/take.ts). One backup at a time. Each is written, verified, and recorded as a `Backup` object whose
 * status says where the archive is and how it was verified — a failed verification is recorded too
 * (verified: false, condition Verified=False with the reason) and the archive removed. After each backup the
 * Mesh status is refreshed (backup-status.ts): lastVerifiedBackup and the BackupFresh condition.
 * `prune` deletes the oldest scheduled backups beyond the retention, only ever behind a newer verified one.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { takeBackup, type TakenBackup } from '../../backup/take.ts';
import { ApiError } from '../../meta/api-error.ts';
import { realClock, type Clock } from '../../meta/clock.ts';
import { createSerial } from '../../meta/serial.ts';
import { rfc3339 } from '../../meta/timestamp.ts';
import type { Logger } from '../../meta/logger.ts';
import { API_VERSION } from '../../meta/types.ts';
import type { FileStore } from '../../store/index.ts';
import type { Backup } from '../../v1alpha1/generated/index.ts';
import { validateObject } from '../../v1alpha1/validate.ts';
import { backupTime, isVerified, refreshMeshBackupStatus } from './backup-status.ts';

/** The label of backups taken by the schedule (only those are pruned). */
export const SCHEDULED_LABEL = 'meshctl.dev/scheduled';

/** Options of `createBackupService`. */
export interface BackupServiceOptions {
  store: FileStore;
  dataDir: string;
  logger: Logger;
  clock?: Clock;
}

/** What to back up where. */
export interface TakeRequest {
  /** The Backup's name (default `backup-<utc time>-<4 hex>`). */
  name?: string;
  /** Where to write the archive on the control-plane node (default: Mesh spec.backup.dir, else `DATA/backups`). */
  dir?: string;
  description?: string;
  /** Labels and annotations of the created Backup (e.g. `meshctl apply`'s last-applied annotation). */
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  scheduled?: boolean;
}

/** Backups in the control-plane process (see the file comment). */
export interface BackupService {
  /** Takes, verifies and records one backup; rejects with an ApiError when it could not be verified. */
  take(req: TakeRequest): Promise<Backup>;
  /** Deletes scheduled backups beyond `retention`, never the newest verified ones; resolves with their names. */
  prune(retention: number): Promise<string[]>;
  /** Rewrites the Mesh's backup status if it changed (the freshness changes with time alone). */
  refreshMesh(): Promise<void>;
  /** The backup directory on the control-plane node. */
  defaultDir(): string;
}

/** Creates the backup service of a control-plane process. */
export function createBackupService(o: BackupServiceOptions): BackupService {
  const clock = o.clock ?? realClock;
  const serial = createSerial();
  const defaultDir = (): string => {
    const dir = o.store.get('meshes', 'mesh')?.spec?.backup?.dir ?? 'backups';
    return isAbsolute(dir) ? dir : join(o.dataDir, dir);
  };
  const refreshMesh = (): Promise<void> => refreshMeshBackupStatus(o.store, clock.now());
  const take = (req: TakeRequest): Promise<Backup> =>
    serial(async () => {
      const backup = await takeAndRecord(o, clock, req, req.dir ?? defaultDir());
      await refreshMesh();
      return backup;
    });
  const prune = (retention: number): Promise<string[]> => serial(() => pruneScheduled(o, retention));
  return { take, prune, refreshMesh, defaultDir };
}

function defaultName(now: number): string {
  const t = new Date(now).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `backup-${t}-${randomBytes(2).toString('hex')}`;
}

async function takeAndRecord(o: BackupServiceOptions, clock: Clock, req: TakeRequest, dir: string): Promise<Backup> {
  const name = req.name ?? defaultName(clock.now());
  const obj: Backup = {
    apiVersion: API_VERSION,
    kind: 'Backup',
    metadata: {
      name,
      ...(req.labels || req.scheduled
        ? { labels: { ...req.labels, ...(req.scheduled ? { [SCHEDULED_LABEL]: 'true' } : {}) } }
        : {}),
      ...(req.annotations ? { annotations: req.annotations } : {}),
    },
    spec: req.description !== undefined ? { description: req.description } : {},
  };
  const causes = validateObject(obj);
  if (causes.length) throw ApiError.invalid('Backup', name, causes);
  if (o.store.get('backups', name)) throw ApiError.alreadyExists('backups', name);
  const now = rfc3339(clock.now());
  try {
    const t = await takeBackup({ store: o.store, dataDir: o.dataDir, name, dir, now: clock.now() });
    const status = verifiedStatus(t, now);
    const created = await o.store.create('backups', { ...obj, status });
    o.logger.info('Took verified backup', { name, file: t.file, bytes: t.bytes, rv: t.manifest.resourceVersion });
    return created;
  } catch (e) {
    if (e instanceof ApiError) throw e;
    const why = (e as Error).message;
    const status: Backup['status'] = {
      verified: false,
      conditions: [
        { type: 'Verified', status: 'False', reason: 'VerificationFailed', message: why, lastTransitionTime: now },
      ],
    };
    await o.store.create('backups', { ...obj, status }).catch(() => {});
    o.logger.error('Failed backup', { name, error: why });
    throw new ApiError({ reason: 'InternalError', message: `backup ${name} failed and was not kept: ${why}` });
  }
}

/** The status of a verified backup. */
function verifiedStatus(t: TakenBackup, now: string): Backup['status'] {
  return {
    file: t.file,
    sha256: t.sha256,
    bytes: t.bytes,
    storeResourceVersion: t.manifest.resourceVersion,
    objectCounts: t.manifest.objectCounts,
    verified: true,
    verifiedAt: now,
    verifiedHow: t.how,
    conditions: [
      { type: 'Complete', status: 'True', reason: 'Written', message: `${t.bytes} bytes`, lastTransitionTime: now },
      { type: 'Verified', status: 'True', reason: 'Verified', message: t.how, lastTransitionTime: now },
    ],
  };
}

async function pruneScheduled(o: BackupServiceOptions, retention: number): Promise<string[]> {
  const scheduled = o.store
    .list('backups', { labelSelector: `${SCHEDULED_LABEL}=true` })
    .items.sort((a, b) => backupTime(b).localeCompare(backupTime(a)));
  const newestVerified = scheduled.findIndex(isVerified);
  if (newestVerified < 0) return [];
  const keep = new Set(scheduled.filter(isVerified).slice(0, retention));
  const gone: string[] = [];
  for (const [i, b] of scheduled.entries()) {
    if (keep.has(b) || i < newestVerified) continue; // never prune what is newer than the newest verified one
    if (b.status?.file) await rm(b.status.file, { force: true });
    await o.store.delete('backups', b.metadata.name ?? '').catch(() => {});
    gone.push(b.metadata.name ?? '');
  }
  if (gone.length) o.logger.info('Pruned backups', { names: gone, retention });
  return gone;
}
