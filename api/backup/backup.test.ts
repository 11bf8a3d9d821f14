import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { caPin } from '../meta/ca-pin.ts';
import { API_VERSION } from '../meta/types.ts';
import { openStore } from '../store/index.ts';
import { decodeArchive } from './archive.ts';
import { restoreArchive, RESTORED_FROM } from './restore.ts';
import { takeBackup } from './take.ts';
import { verifyArchive } from './verify.ts';
import { dataDirWithStore, flipByte, swapMember, tempDir } from './testdata/helpers.ts';

test('a backup is written 0600 with a manifest, verified, and holds every object at one resourceVersion', async (t) => {
  const { dataDir, store } = await dataDirWithStore(t);
  const out = tempDir(t);
  const b = await takeBackup({ store, dataDir, name: 'b1', dir: join(out, 'backups') });
  assert.equal(statSync(b.file).mode & 0o777, 0o600);
  assert.equal(b.manifest.resourceVersion, store.resourceVersion());
  assert.deepEqual(b.manifest.objectCounts, { Mesh: 1, Node: 2, Declaration: 1 });
  assert.equal(b.manifest.mesh.caPin, caPin(readFileSync(join(dataDir, 'pki/ca.crt'), 'utf8')));
  assert.deepEqual(
    decodeArchive(readFileSync(b.file)).map((m) => m.name),
    ['manifest.json', ...b.manifest.members.map((m) => m.name)],
  );
  const v = await verifyArchive(readFileSync(b.file), { expectCaPin: b.manifest.mesh.caPin });
  assert.equal(v.manifest.name, 'b1');
});

/** Each damaged archive and the reason verification and restore must give; `pin` is the good archive's mesh. */
async function damaged(t: TestContext): Promise<{ pin: string; cases: Array<[string, Buffer, RegExp]> }> {
  const { dataDir, store } = await dataDirWithStore(t);
  const out = tempDir(t);
  const taken = await takeBackup({ store, dataDir, name: 'good', dir: out });
  const good = readFileSync(taken.file);
  const other = await dataDirWithStore(t);
  const foreign = readFileSync((await takeBackup({ ...other, name: 'foreign', dir: out })).file);
  const storeAt = good.indexOf('"format":"meshctl-store-snapshot"');
  const future = Buffer.from(good.toString('latin1').replace('meshctl-backup 1', 'meshctl-backup 9'), 'latin1');
  return {
    pin: taken.manifest.mesh.caPin,
    cases: [
      [
        'a flipped byte in the store',
        flipByte(good, storeAt + 3),
        /member store\/snapshot\.jsonl does not match its SHA-256/,
      ],
      [
        'a flipped byte in the trailer',
        flipByte(good, good.length - 10),
        /SHA-256 of the whole archive does not match/,
      ],
      ['a truncated archive', good.subarray(0, Math.floor(good.length / 2)), /truncated archive/],
      ['an archive cut before its trailer', good.subarray(0, good.lastIndexOf('{"end"')), /truncated archive/],
      [
        'a member swapped in from another archive',
        swapMember(good, foreign, 'pki/ca.key'),
        /member pki\/ca\.key is not the one the manifest records/,
      ],
      ['an archive of another mesh', foreign, /the archive is of another mesh/],
      ['a file of another format', Buffer.from('PK\x03\x04 not a backup at all\n'), /not a meshctl backup archive/],
      ['a future format version', future, /format version 9 is not supported/],
    ],
  };
}

test('verification refuses a flipped byte, a cut, a swapped member, another mesh and another format, naming each', async (t) => {
  const { pin, cases } = await damaged(t);
  for (const [what, buf, reason] of cases) await assert.rejects(verifyArchive(buf, { expectCaPin: pin }), reason, what);
});

test('restore refuses each damaged archive with its reason and leaves no data directory behind', async (t) => {
  const parent = tempDir(t);
  const { pin, cases } = await damaged(t);
  for (const [i, [what, buf, reason]] of cases.entries()) {
    const dataDir = join(parent, `restored-${i}`);
    await assert.rejects(restoreArchive({ archive: buf, dataDir, expectCaPin: pin }), reason, what);
    assert.equal(existsSync(dataDir), false, `${what}: no data directory`);
  }
  assert.deepEqual(readdirSync(parent), [], 'no temporary restore directory is left behind');
});

test('restore makes a new data directory: store at the backup, Declarations re-issued, the Mesh told what was lost', async (t) => {
  const { dataDir, store } = await dataDirWithStore(t);
  const out = tempDir(t);
  const before = store.get('declarations', 'node-a');
  const b = await takeBackup({ store, dataDir, name: 'b1', dir: out });
  await store.create('nodes', { apiVersion: API_VERSION, kind: 'Node', metadata: { name: 'after' }, spec: {} });
  const target = join(out, 'new-data');
  mkdirSync(target);
  writeFileSync(join(target, 'stray'), 'x');
  await assert.rejects(restoreArchive({ archive: readFileSync(b.file), dataDir: target }), /not empty/);
  const fresh = join(out, 'fresh');
  const r = await restoreArchive({ archive: readFileSync(b.file), dataDir: fresh, expectCaPin: b.manifest.mesh.caPin });
  assert.match(r.lost, /resourceVersion \d+.*every change made after it is lost/);
  assert.deepEqual(r.declarations, ['node-a']);
  for (const f of ['pki/ca.key', 'pki/server.key', 'auth/admin-token.sha256'])
    assert.equal(statSync(join(fresh, f)).mode & 0o777, 0o600, f);
  const restored = await openStore({ dir: join(fresh, 'store') });
  t.after(() => restored.close());
  assert.equal(restored.get('nodes', 'after'), undefined, 'a change after the backup is not in it');
  assert.ok(restored.get('nodes', 'node-b'));
  assert.ok(
    Number(restored.resourceVersion()) > 1 << 20,
    'resourceVersions fenced past any the lost control plane issued',
  );
  const d = restored.get('declarations', 'node-a');
  assert.notEqual(d?.metadata.uid, before?.metadata.uid, 're-issued with a new uid');
  assert.deepEqual(d?.spec, before?.spec);
  assert.equal(d?.metadata.annotations?.[RESTORED_FROM], `b1 rv ${b.manifest.resourceVersion}`);
  const cond = restored.get('meshes', 'mesh')?.status?.conditions?.find((c) => c.type === 'Restored');
  assert.equal(cond?.reason, 'RestoredFromBackup');
});

test('a store holding an invalid object fails verification; the archive is not kept', async (t) => {
  const { dataDir, store } = await dataDirWithStore(t);
  const out = tempDir(t);
  await store.create('nodes', {
    apiVersion: API_VERSION,
    kind: 'Node',
    metadata: { name: 'bad' },
    spec: { nonsense: true },
  } as never);
  await assert.rejects(takeBackup({ store, dataDir, name: 'b1', dir: out }), /object nodes\/bad is invalid/);
  assert.equal(existsSync(join(out, 'b1.meshbackup')), false);
});
