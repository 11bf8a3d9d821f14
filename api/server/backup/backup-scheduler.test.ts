import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../../../test/harness.ts';
import { FakeClock } from '../../meta/fake-clock.ts';
import { silentLogger } from '../../meta/logger.ts';
import { API_VERSION } from '../../meta/types.ts';
import type { FileStore } from '../../store/index.ts';
import type { Mesh } from '../../v1alpha1/generated/index.ts';
import { startBackupScheduler } from './backup-scheduler.ts';
import { isVerified } from './backup-status.ts';

const HOUR = 3_600_000;

function meshOf(store: FileStore): Mesh {
  return store.get('meshes', 'mesh')!;
}

async function setBackupSpec(store: FileStore, backup: NonNullable<Mesh['spec']>['backup']): Promise<void> {
  const mesh = meshOf(store);
  const spec = { ...mesh.spec };
  if (backup) spec.backup = backup;
  else delete spec.backup;
  await store.update('meshes', { ...mesh, spec });
}

test('scheduled backups: one per interval, each verified; pruned to the retention only behind a newer verified one', async (t) => {
  const clock = new FakeClock({ start: Date.parse('2030-01-01T00:00:00Z') });
  const srv = await startServer({ backups: true, clock });
  t.after(() => srv.stop());
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-scheduled-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { store } = srv;
  await store.create('meshes', { apiVersion: API_VERSION, kind: 'Mesh', metadata: { name: 'mesh' }, spec: {} });
  const scheduler = startBackupScheduler({ service: srv.backups!, store, logger: silentLogger, clock });
  t.after(() => scheduler.stop());
  await scheduler.tick();
  assert.equal(store.list('backups').items.length, 0, 'no schedule without Mesh spec.backup');
  assert.equal(
    meshOf(store).status,
    undefined,
    'no backup and no schedule: the Mesh status says nothing about backups',
  );

  await setBackupSpec(store, { interval: '1h', retention: 2, dir });
  await scheduler.tick();
  const first = store.list('backups').items;
  assert.equal(first.length, 1);
  assert.equal(meshOf(store).status?.lastVerifiedBackup?.name, first[0].metadata.name);
  assert.equal(meshOf(store).status?.conditions?.find((c) => c.type === 'BackupFresh')?.status, 'True');
  clock.advance(30 * 60_000);
  await scheduler.tick();
  assert.equal(store.list('backups').items.length, 1, 'not due before the interval');

  for (let i = 0; i < 2; i++) {
    clock.advance(HOUR);
    await scheduler.tick();
  }
  const kept = store.list('backups').items;
  assert.equal(kept.length, 2, 'pruned to the retention');
  assert.equal(
    kept.some((b) => b.metadata.name === first[0].metadata.name),
    false,
    'the oldest went',
  );
  assert.equal(existsSync(first[0].status!.file!), false, "the oldest's archive is removed");

  // The next backup cannot be written: nothing is pruned, and the failure is recorded.
  const blocker = join(dir, 'a-file');
  writeFileSync(blocker, '');
  await setBackupSpec(store, { interval: '1h', retention: 2, dir: join(blocker, 'sub') });
  clock.advance(HOUR);
  await scheduler.tick();
  const after = store.list('backups').items;
  assert.equal(after.filter(isVerified).length, 2, 'the verified backups are all kept after a failed one');
  assert.ok(
    after.every((b) => !isVerified(b) || existsSync(b.status!.file!)),
    'with their archives',
  );
  const failed = after.find((b) => !isVerified(b));
  assert.equal(failed?.status?.conditions?.[0]?.reason, 'VerificationFailed');

  await setBackupSpec(store, undefined);
  clock.advance(26 * HOUR);
  await scheduler.tick();
  const fresh = meshOf(store).status?.conditions?.find((c) => c.type === 'BackupFresh');
  assert.equal(fresh?.status, 'False');
  assert.equal(fresh?.reason, 'Stale');
});
