/**
 * Taking a backup in the control-plane process: a consistent cut of the store (`FileStore.snapshot()`: every
 * object at one resourceVersion, taken without stopping the API), the data directory's CA, serving key and
 * admin-token hash, a manifest, all in one archive (archive.ts) written 0600 — then read back from the disk and
 * verified (verify.ts). Only a verified archive is reported; a failed one is removed. Node credentials and join
 * tokens are in the store as hashes (internal Secrets), so they are in the cut.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../meta/atomic-file.ts';
import { caPin } from '../meta/ca-pin.ts';
import { rfc3339 } from '../meta/timestamp.ts';
import type { FileStore, Snapshot } from '../store/index.ts';
import { nodeStoreFs, writeSnapshot } from '../store/index.ts';
import { encodeArchive, sha256, type Member } from './archive.ts';
import { DATA_MEMBERS, describeMembers, manifestMember, MANIFEST_FORMAT, type Manifest } from './manifest.ts';
import { verifyArchive } from './verify.ts';

/** The file name of backup `name` in a backup directory. */
export function archiveFileName(name: string): string {
  return `${name}.meshbackup`;
}

/** Options of `takeBackup`. */
export interface TakeBackupOptions {
  store: FileStore;
  /** The control plane's data directory (its pki/ and auth/ go into the archive). */
  dataDir: string;
  /** The Backup's name (the file is `<dir>/<name>.meshbackup`). */
  name: string;
  /** Where the archive is written (created 0700 if missing). */
  dir: string;
  /** The creation time (ms; default now). */
  now?: number;
}

/** A verified backup on disk. */
export interface TakenBackup {
  file: string;
  bytes: number;
  sha256: string;
  manifest: Manifest;
  how: string;
}

/** Takes, writes and verifies one backup (see the file comment). */
export async function takeBackup(o: TakeBackupOptions): Promise<TakenBackup> {
  const cut = await o.store.snapshot();
  const storeMember = await serializeSnapshot(cut);
  const data: Member[] = [storeMember];
  for (const name of DATA_MEMBERS.slice(1)) data.push({ name, data: readFileSync(join(o.dataDir, name)) });
  const mesh = cut.kinds.get('meshes')?.get('mesh') as { status?: Record<string, string> } | undefined;
  const manifest: Manifest = {
    format: MANIFEST_FORMAT,
    version: 1,
    name: o.name,
    mesh: { caPin: caPin(readFileSync(join(o.dataDir, 'pki/ca.crt'), 'utf8')) },
    ...(mesh?.status?.controlPlaneNode ? { sourceNode: mesh.status.controlPlaneNode } : {}),
    resourceVersion: String(cut.rv),
    ...countObjects(cut),
    createdAt: rfc3339(o.now ?? Date.now()),
    ...(mesh?.status?.recoveryDeadline ? { recoveryDeadline: mesh.status.recoveryDeadline } : {}),
    members: describeMembers(data),
  };
  const buf = encodeArchive([manifestMember(manifest), ...data]);
  mkdirSync(o.dir, { recursive: true, mode: 0o700 });
  const file = join(o.dir, archiveFileName(o.name));
  await writeFileAtomic(file, buf, { mode: 0o600 });
  try {
    const onDisk = await readFile(file);
    const v = await verifyArchive(onDisk, { expectCaPin: manifest.mesh.caPin });
    return { file, bytes: onDisk.length, sha256: sha256(onDisk), manifest, how: v.how };
  } catch (e) {
    await rm(file, { force: true });
    throw e;
  }
}

/** The store's own snapshot file format (snapshot.ts), so that restore and verification open it with the store code. */
async function serializeSnapshot(cut: Snapshot): Promise<Member> {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-backup-'));
  try {
    await writeSnapshot({ dir, fs: nodeStoreFs, snapshot: cut });
    return { name: 'store/snapshot.jsonl', data: await readFile(join(dir, 'snapshot.jsonl')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function countObjects(cut: Snapshot): { objects: number; objectCounts: Record<string, number> } {
  const objectCounts: Record<string, number> = {};
  let objects = 0;
  for (const [plural, kind] of cut.kinds)
    for (const obj of kind.values()) {
      objectCounts[obj.kind ?? plural] = (objectCounts[obj.kind ?? plural] ?? 0) + 1;
      objects++;
    }
  return { objects, objectCounts };
}
