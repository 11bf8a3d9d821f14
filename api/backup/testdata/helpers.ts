/**
 * Test helpers of the backup tests: a control plane's data directory (real PKI via first-start.ts, a real store
 * with a few objects) removed when the test ends, and archive surgery (flip, cut, swap a member).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { ensureControlPlaneFiles } from '../../server/pki/first-start.ts';
import { openStore, type FileStore } from '../../store/index.ts';
import { API_VERSION } from '../../meta/types.ts';
import { decodeArchive, encodeArchive } from '../archive.ts';

/** A temp directory removed when the test ends. */
export function tempDir(t: TestContext, prefix = 'meshctl-backup-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A data directory with its PKI and an open store holding a Mesh, two Nodes and a Declaration. */
export async function dataDirWithStore(t: TestContext): Promise<{ dataDir: string; store: FileStore }> {
  const dataDir = tempDir(t);
  await ensureControlPlaneFiles({ dataDir, listenHost: '127.0.0.1' });
  const store = await openStore({ dir: join(dataDir, 'store') });
  t.after(() => store.close());
  const meta = (name: string): { name: string } => ({ name });
  await store.create('meshes', { apiVersion: API_VERSION, kind: 'Mesh', metadata: meta('mesh'), spec: {} });
  for (const n of ['node-a', 'node-b'])
    await store.create('nodes', { apiVersion: API_VERSION, kind: 'Node', metadata: meta(n), spec: {} });
  await store.create('declarations', {
    apiVersion: API_VERSION,
    kind: 'Declaration',
    metadata: meta('node-a'),
    spec: { generation: 3, resources: [] },
  });
  return { dataDir, store };
}

/** The archive with one bit of the byte at `offset` flipped. */
export function flipByte(buf: Buffer, offset: number): Buffer {
  const out = Buffer.from(buf);
  out[offset] ^= 0x01;
  return out;
}

/** The archive with member `name` replaced by the same member of `other` (a well-formed container). */
export function swapMember(buf: Buffer, other: Buffer, name: string): Buffer {
  const theirs = decodeArchive(other).find((m) => m.name === name);
  if (!theirs) throw new Error(`no member ${name}`);
  return encodeArchive(decodeArchive(buf).map((m) => (m.name === name ? theirs : m)));
}
