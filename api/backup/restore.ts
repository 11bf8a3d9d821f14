/**
 * Restoring a backup into a NEW data directory, all or nothing: the archive is verified first (verify.ts), its
 * members are written into a temporary directory beside the target, the store there is opened with the real
 * store code and prepared, and only then is the directory renamed into place — a failure at any step removes
 * the temporary directory and leaves the target as it was (absent or empty).
 *
 * Preparing the store:
 *   - Opening a snapshot without a clean-close mark fences its resourceVersions (api/store/index.ts), so every
 *     resourceVersion the lost control plane issued after the backup is below the restored store's: an agent's
 *     watch from one is answered 410 and the agent relists, rather than resuming past the restored state.
 *   - Every Declaration is re-issued (deleted and created again: a new uid, the same spec, annotated
 *     `meshctl.dev/restored-from`). An agent whose stored declaration is newer than the backup's (changes made
 *     after the backup) would otherwise ignore the restored one as an older generation of the same object;
 *     a new uid makes it take the restored declaration deliberately, and it reports that it went back
 *     (a `DeclarationReplaced` Warning event naming both generations).
 *   - The Mesh gets a `Restored` condition naming the backup, its resourceVersion and age: what was lost.
 * The control-plane assignment is re-declared for the new node when the control plane first starts on it
 * (`mesh-control-plane restore`, or `--restore`: controllers/check-control-plane-node.ts).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, renameSync, rmSync, rmdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { renderMeshconfig } from '../client/meshconfig.ts';
import { fsyncDirSync } from '../meta/atomic-file.ts';
import { setCondition } from '../meta/conditions.ts';
import { humanDuration } from '../meta/human-duration.ts';
import { rfc3339 } from '../meta/timestamp.ts';
import { hashToken } from '../server/access/auth.ts';
import { openStore, type FileStore } from '../store/index.ts';
import type { Declaration } from '../v1alpha1/generated/index.ts';
import { BackupError } from './archive.ts';
import { RESTORED_FROM } from './restored-from.ts';
import type { Manifest } from './manifest.ts';
import { verifyArchive, writeMembers } from './verify.ts';

export { RESTORED_FROM } from './restored-from.ts';

/** Options of `restoreArchive`. */
export interface RestoreOptions {
  /** The archive's bytes. */
  archive: Buffer;
  /** The new data directory: must not exist, or be empty. */
  dataDir: string;
  /** Refuse an archive of another mesh (CA pin `sha256:<hex>`). */
  expectCaPin?: string;
  /** The admin token (from the admin's meshconfig) to keep: checked against the archived hash. */
  adminToken?: string;
  /** Now, in ms (default Date.now()). */
  now?: number;
}

/** What a restore did. */
export interface Restored {
  manifest: Manifest;
  /** How old the backup was at the restore, in ms. */
  ageMs: number;
  /** The Declarations re-issued (node names). */
  declarations: string[];
  /** The one-line summary of what the restore loses, for people. */
  lost: string;
}

/** Restores an archive into a new data directory (see the file comment). */
export async function restoreArchive(o: RestoreOptions): Promise<Restored> {
  checkTarget(o.dataDir);
  const { manifest, members } = await verifyArchive(o.archive, o.expectCaPin ? { expectCaPin: o.expectCaPin } : {});
  const now = o.now ?? Date.now();
  const ageMs = Math.max(0, now - Date.parse(manifest.createdAt));
  const lost =
    `restored backup ${manifest.name} at resourceVersion ${manifest.resourceVersion}, taken ${manifest.createdAt} ` +
    `(${humanDuration(ageMs)} ago): every change made after it is lost`;
  const tmp = join(dirname(o.dataDir), `.${basename(o.dataDir)}.restoring-${randomBytes(4).toString('hex')}`);
  try {
    writeMembers(tmp, members);
    if (o.adminToken !== undefined) keepAdminToken(tmp, members, o.adminToken);
    const declarations = await prepareStore(join(tmp, 'store'), manifest, lost, now);
    if (existsSync(o.dataDir)) rmdirSync(o.dataDir);
    renameSync(tmp, o.dataDir);
    fsyncDirSync(dirname(o.dataDir));
    return { manifest, ageMs, declarations, lost };
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}

function checkTarget(dataDir: string): void {
  if (!existsSync(dataDir)) return;
  let entries: string[];
  try {
    entries = readdirSync(dataDir);
  } catch (e) {
    throw new BackupError(`cannot restore into ${dataDir}: ${(e as Error).message}`);
  }
  if (entries.length)
    throw new BackupError(`cannot restore into ${dataDir}: it is not empty (a restore makes a new data directory)`);
}

/** Writes admin.meshconfig with the admin's own token, once it is checked against the archived hash. */
function keepAdminToken(dir: string, members: Array<{ name: string; data: Buffer }>, token: string): void {
  const stored = members
    .find((m) => m.name === 'auth/admin-token.sha256')
    ?.data.toString('utf8')
    .trim();
  if (hashToken(token) !== stored)
    throw new BackupError("the admin meshconfig's token is not this backup's admin token (another mesh's meshconfig?)");
  const caData = members.find((m) => m.name === 'pki/ca.crt')?.data.toString('utf8');
  // The server URL is a placeholder: the control plane rewrites admin.meshconfig with its URL when it listens.
  const text = renderMeshconfig({ server: 'https://restored.invalid', token, ...(caData ? { caData } : {}) });
  writeMembers(dir, [{ name: 'admin.meshconfig', data: Buffer.from(text) }]);
}

async function prepareStore(dir: string, manifest: Manifest, lost: string, now: number): Promise<string[]> {
  const store = await openStore({ dir });
  try {
    const names: string[] = [];
    for (const d of store.list('declarations').items) {
      await reissue(store, d, `${manifest.name} rv ${manifest.resourceVersion}`);
      names.push(d.metadata.name ?? '');
    }
    const mesh = store.get('meshes', 'mesh');
    if (mesh) {
      const conditions = setCondition(
        mesh.status?.conditions ?? [],
        { type: 'Restored', status: 'True', reason: 'RestoredFromBackup', message: lost },
        rfc3339(now),
      );
      await store.update('meshes', { ...mesh, status: { ...mesh.status, conditions } }, { subresource: 'status' });
    }
    return names;
  } finally {
    await store.close();
  }
}

async function reissue(store: FileStore, d: Declaration, from: string): Promise<void> {
  const name = d.metadata.name ?? '';
  await store.delete('declarations', name, { propagationPolicy: 'Orphan' });
  const { apiVersion, kind, spec } = d;
  const metadata = {
    name,
    ...(d.metadata.labels ? { labels: d.metadata.labels } : {}),
    annotations: { ...d.metadata.annotations, [RESTORED_FROM]: from },
  };
  await store.create('declarations', { apiVersion, kind, metadata, spec });
}
