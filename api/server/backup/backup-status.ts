/**
 * The Mesh's backup status, written by the control-plane process (backup-service.ts after each backup, and the
 * scheduler on its ticks, since freshness changes with time alone): `status.lastVerifiedBackup` (the newest
 * Backup whose verification succeeded: name and creation time) and the `BackupFresh` condition — True while
 * that backup is younger than the backup interval (Mesh spec.backup.interval, default 24h) plus an hour of
 * slack, False (`Stale`, or `NoVerifiedBackup`) otherwise. Written only when it changed, and left out while there
 * has been no verified backup and no schedule (a Mesh that never used backups keeps its status as it was).
 */
import { isDeepStrictEqual } from 'node:util';
import { setCondition } from '../../meta/conditions.ts';
import { parseDuration } from '../../meta/duration.ts';
import { humanDuration } from '../../meta/human-duration.ts';
import { rfc3339 } from '../../meta/timestamp.ts';
import type { FileStore } from '../../store/index.ts';
import type { Backup, Mesh } from '../../v1alpha1/generated/index.ts';

const HOUR = 3_600_000;

/** True when a Backup's verification succeeded. */
export function isVerified(b: Backup): boolean {
  return b.status?.verified === true;
}

/** When a Backup was taken: status.verifiedAt (on the service's clock), else its creation time. */
export function backupTime(b: Backup): string {
  return b.status?.verifiedAt ?? b.metadata.creationTimestamp ?? '';
}

/** The backup interval of a Mesh in ms (spec.backup.interval, default 24h). */
export function backupIntervalMs(mesh: Mesh | undefined): number {
  return parseDuration(mesh?.spec?.backup?.interval ?? '24h');
}

/** How old the newest verified backup may be while BackupFresh is True. */
export function freshForMs(mesh: Mesh | undefined): number {
  return backupIntervalMs(mesh) + HOUR;
}

/** The newest verified Backup, or undefined. */
export function newestVerified(store: Pick<FileStore, 'list'>): Backup | undefined {
  return store
    .list('backups')
    .items.filter(isVerified)
    .sort((a, b) => backupTime(b).localeCompare(backupTime(a)))[0];
}

/** Writes the Mesh's lastVerifiedBackup and BackupFresh condition when they changed (nothing while there is nothing to say). */
export async function refreshMeshBackupStatus(store: FileStore, now: number): Promise<void> {
  const mesh = store.get('meshes', 'mesh');
  if (!mesh) return;
  const last = newestVerified(store);
  const status = { ...mesh.status };
  const others = (mesh.status?.conditions ?? []).filter((c) => c.type !== 'BackupFresh');
  if (!last && !mesh.spec?.backup) {
    // Never backed up and no schedule: the status says nothing about backups (a deleted last backup is forgotten).
    delete status.lastVerifiedBackup;
    if (others.length) status.conditions = others;
    else delete status.conditions;
  } else {
    const time = last ? backupTime(last) : undefined;
    status.conditions = setCondition(
      mesh.status?.conditions ?? [],
      { type: 'BackupFresh', ...freshness(mesh, last, now) },
      rfc3339(now),
    );
    if (last && time) status.lastVerifiedBackup = { name: last.metadata.name ?? '', time };
    else delete status.lastVerifiedBackup;
  }
  if (isDeepStrictEqual(status, mesh.status ?? {})) return;
  await store.update('meshes', { ...mesh, status }, { subresource: 'status' });
}

/** The BackupFresh condition's status, reason and message. */
function freshness(
  mesh: Mesh,
  last: Backup | undefined,
  now: number,
): { status: 'True' | 'False'; reason: string; message: string } {
  if (!last) return { status: 'False', reason: 'NoVerifiedBackup', message: 'no verified backup exists' };
  const time = backupTime(last);
  const limit = freshForMs(mesh);
  if (now - Date.parse(time) <= limit)
    return { status: 'True', reason: 'Fresh', message: `backup ${last.metadata.name} is verified` };
  return {
    status: 'False',
    reason: 'Stale',
    message: `the last verified backup (${last.metadata.name}, taken ${time}) is older than ${humanDuration(limit)}`,
  };
}
