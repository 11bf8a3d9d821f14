/**
 * Verification of a backup archive, the same offline (`meshctl backup verify FILE`) as right after it was made:
 * the container and the manifest are checked (archive.ts, manifest.ts), the archive is of the expected mesh
 * (its CA pin), its members are written into a scratch data directory that the real store code then opens
 * (`openStore`), every object is validated against the schemas (api/v1alpha1/validate.ts; internal Secrets by
 * their shape), and the resourceVersion and object counts are compared with the manifest; the keys must
 * match their certificates. The scratch directory is always removed. Throws a BackupError naming what failed.
 */
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { caPin } from '../meta/ca-pin.ts';
import type { KubeObject } from '../meta/types.ts';
import { SECRET_API_VERSION, SECRETS } from '../server/access/secrets.ts';
import { openStore } from '../store/index.ts';
import { validateObject } from '../v1alpha1/validate.ts';
import { BackupError, decodeArchive, type Member } from './archive.ts';
import { checkManifest, type Manifest } from './manifest.ts';

/** Options of `verifyArchive`. */
export interface VerifyOptions {
  /** Refuse an archive of another mesh: the CA pin (`sha256:<hex>`) the archive's CA must have. */
  expectCaPin?: string;
  /** Where the scratch directory is made (default the system temp dir). */
  scratchParent?: string;
}

/** What verification found. */
export interface Verified {
  manifest: Manifest;
  members: Member[];
  /** How it was verified, for Backup status.verifiedHow and the CLI. */
  how: string;
}

/** How every verification checks (the same steps each time). */
export const VERIFIED_HOW =
  'container and member SHA-256s, manifest, CA pin, keys match certificates, opened by the store code in a scratch ' +
  'directory, every object valid against the schemas, resourceVersion and object counts match the manifest';

/** Verifies an archive's bytes (see the file comment). */
export async function verifyArchive(buf: Buffer, opts: VerifyOptions = {}): Promise<Verified> {
  const members = decodeArchive(buf);
  const manifest = checkManifest(members);
  const file = (name: string): Buffer => members.find((m) => m.name === name)?.data ?? Buffer.alloc(0);
  checkPki(file, manifest, opts.expectCaPin);
  if (!/^[a-f0-9]{64}\n?$/.test(file('auth/admin-token.sha256').toString('utf8')))
    throw new BackupError('member auth/admin-token.sha256 is not a SHA-256 hex digest');
  const scratch = mkdtempSync(join(opts.scratchParent ?? tmpdir(), 'meshctl-verify-'));
  try {
    writeMembers(scratch, members);
    await checkStore(join(scratch, 'store'), manifest);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return { manifest, members, how: VERIFIED_HOW };
}

/** Writes the data members into `dir` as a data directory (0600 files, 0700 directories). */
export function writeMembers(dir: string, members: Member[]): void {
  for (const m of members) {
    if (m.name === 'manifest.json') continue;
    const path = join(dir, m.name);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, m.data, { mode: 0o600 });
  }
}

function checkPki(file: (name: string) => Buffer, manifest: Manifest, expectCaPin: string | undefined): void {
  let pin: string;
  try {
    pin = caPin(file('pki/ca.crt').toString('utf8'));
  } catch {
    throw new BackupError('member pki/ca.crt holds no readable CA certificate');
  }
  if (pin !== manifest.mesh.caPin)
    throw new BackupError(`member pki/ca.crt has CA pin ${pin}, the manifest says ${manifest.mesh.caPin}`);
  if (expectCaPin && pin !== expectCaPin)
    throw new BackupError(
      `the archive is of another mesh: its CA pin is ${pin}, this mesh's is ${expectCaPin} (wrong mesh)`,
    );
  for (const [cert, key] of [
    ['pki/ca.crt', 'pki/ca.key'],
    ['pki/server.crt', 'pki/server.key'],
  ]) {
    let match = false;
    try {
      const pub = new X509Certificate(file(cert)).publicKey.export({ type: 'spki', format: 'der' });
      const fromKey = createPublicKey(createPrivateKey(file(key))).export({ type: 'spki', format: 'der' });
      match = pub.equals(fromKey);
    } catch {
      /* reported below */
    }
    if (!match) throw new BackupError(`member ${key} is not the key of ${cert}`);
  }
}

/** Opens the scratch store with the real store code and checks rv, counts and every object. */
async function checkStore(dir: string, manifest: Manifest): Promise<void> {
  let store;
  try {
    store = await openStore({ dir });
  } catch (e) {
    throw new BackupError(`the store in the archive does not open: ${(e as Error).message}`);
  }
  try {
    const stats = store.stats();
    if (stats.openedAtRv !== manifest.resourceVersion)
      throw new BackupError(
        `the store is at resourceVersion ${stats.openedAtRv}, the manifest says ${manifest.resourceVersion}`,
      );
    const counts: Record<string, number> = {};
    for (const plural of Object.keys(stats.kinds))
      for (const obj of store.list(plural).items) {
        checkObject(plural, obj);
        counts[obj.kind ?? plural] = (counts[obj.kind ?? plural] ?? 0) + 1;
      }
    const want = JSON.stringify(sorted(manifest.objectCounts));
    if (JSON.stringify(sorted(counts)) !== want)
      throw new BackupError(`object counts ${JSON.stringify(sorted(counts))} differ from the manifest's ${want}`);
  } finally {
    await store.close();
  }
}

function checkObject(plural: string, obj: KubeObject): void {
  const where = `${plural}/${obj.metadata?.name ?? '?'}`;
  if (plural === SECRETS) {
    const s = obj as KubeObject & { type?: unknown; data?: unknown };
    const ok = s.apiVersion === SECRET_API_VERSION && s.kind === 'Secret' && typeof s.type === 'string';
    if (!ok || typeof s.data !== 'object' || s.data === null)
      throw new BackupError(`object ${where} is not a valid internal Secret`);
    return;
  }
  const causes = validateObject(obj);
  if (causes.length)
    throw new BackupError(
      `object ${where} is invalid: ${causes.map((c) => `${c.field ?? ''} ${c.message}`.trim()).join('; ')}`,
    );
}

function sorted(r: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(r).sort(([a], [b]) => a.localeCompare(b)));
}
