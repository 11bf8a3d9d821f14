/**
 * The backup manifest (`manifest.json`, an archive's first member): what the archive holds and where it came
 * from — the mesh (its CA pin), the source control-plane node, the store's resourceVersion and object counts,
 * when it was made and the recovery deadline at that moment — and the size and SHA-256 of every other member.
 */
import { BackupError, type Member, sha256 } from './archive.ts';

/** The manifest's format tag and version. */
export const MANIFEST_FORMAT = 'meshctl-backup-manifest';

/** The members every archive holds besides the manifest (paths as in a control plane's data directory). */
export const DATA_MEMBERS = [
  'store/snapshot.jsonl',
  'pki/ca.crt',
  'pki/ca.key',
  'pki/server.crt',
  'pki/server.key',
  'auth/admin-token.sha256',
] as const;

/** One member as the manifest records it. */
export interface ManifestMember {
  name: string;
  bytes: number;
  sha256: string;
}

/** The manifest (see the file comment). */
export interface Manifest {
  format: typeof MANIFEST_FORMAT;
  version: 1;
  /** The Backup object's name. */
  name: string;
  /** The mesh: the pin of its CA (`sha256:<hex>`, as in the join command). */
  mesh: { caPin: string };
  /** The control-plane node the backup was taken on (Mesh status.controlPlaneNode), when declared. */
  sourceNode?: string;
  /** The store's resourceVersion: every object of the snapshot at this one version. */
  resourceVersion: string;
  objects: number;
  /** Object counts by kind (internal kinds, e.g. Secret, included). */
  objectCounts: Record<string, number>;
  createdAt: string;
  /** Mesh status.recoveryDeadline when the backup was taken (absent until certificates set one). */
  recoveryDeadline?: string;
  members: ManifestMember[];
}

/** The manifest member for `data` members: the manifest goes first. */
export function manifestMember(manifest: Manifest): Member {
  return { name: 'manifest.json', data: Buffer.from(JSON.stringify(manifest, null, 2) + '\n') };
}

/** What the manifest records of each member. */
export function describeMembers(members: Member[]): ManifestMember[] {
  return members.map((m) => ({ name: m.name, bytes: m.data.length, sha256: sha256(m.data) }));
}

/** Parses the first member as the manifest and checks the others against it; throws a BackupError on any mismatch. */
export function checkManifest(members: Member[]): Manifest {
  const [first, ...rest] = members;
  if (first?.name !== 'manifest.json') throw new BackupError('corrupt archive: the first member is not manifest.json');
  let m: Manifest;
  try {
    m = JSON.parse(first.data.toString('utf8')) as Manifest;
  } catch {
    throw new BackupError('corrupt archive: manifest.json is not JSON');
  }
  if (m.format !== MANIFEST_FORMAT || m.version !== 1 || !Array.isArray(m.members) || !m.mesh?.caPin)
    throw new BackupError(`manifest.json is not a version-1 ${MANIFEST_FORMAT}`);
  const byName = new Map(rest.map((x) => [x.name, x]));
  for (const want of DATA_MEMBERS)
    if (!m.members.some((x) => x.name === want)) throw new BackupError(`manifest.json does not list member ${want}`);
  for (const rec of m.members) {
    const got = byName.get(rec.name);
    if (!got) throw new BackupError(`member ${rec.name} is missing from the archive (the manifest lists it)`);
    if (got.data.length !== rec.bytes || sha256(got.data) !== rec.sha256)
      throw new BackupError(
        `member ${rec.name} is not the one the manifest records (SHA-256 differs: swapped or changed)`,
      );
    byName.delete(rec.name);
  }
  const extra = [...byName.keys()];
  if (extra.length) throw new BackupError(`member ${extra[0]} is in the archive but not in the manifest`);
  return m;
}
