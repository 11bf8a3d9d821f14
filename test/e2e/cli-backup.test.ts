// Issue 11: `meshctl backup` against the real API server (in process, HTTPS) and offline: create with -o saves a
// verified archive off the node (0600), list shows it, pull fetches it again, verify re-checks it with no control
// plane and refuses a damaged or foreign one with the reason and exit code 1, restore writes a new data directory
// and refuses a non-empty one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../harness.ts';
import { meshctl } from './mesh-helpers.ts';

test('meshctl backup create -o, list, pull, verify (offline) and restore', async (t) => {
  const srv = await startServer({ backups: true });
  t.after(() => srv.stop());
  const other = await startServer({ backups: true });
  t.after(() => other.stop());
  const here = mkdtempSync(join(tmpdir(), 'meshctl-cli-backup-'));
  t.after(() => rmSync(here, { recursive: true, force: true }));
  const file = join(here, 'one.meshbackup');

  const created = await meshctl(srv.meshconfigPath, ['backup', 'create', '--name', 'one', '-o', file]);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, /backup one saved and verified on the control-plane node/);
  assert.match(created.stdout, /saved off the node: .*one\.meshbackup/);
  assert.equal(statSync(file).mode & 0o777, 0o600);

  const list = await meshctl(srv.meshconfigPath, ['backup', 'list']);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /^NAME\s+AGE\s+SIZE\s+OBJECTS\s+RESOURCEVERSION\s+VERIFIED\s+FILE/);
  assert.match(list.stdout, /\none\s+\S+\s+\d+\s+\d+\s+\d+\s+True\s+\//);

  const again = join(here, 'again.meshbackup');
  const pulled = await meshctl(srv.meshconfigPath, ['backup', 'pull', 'one', '-o', again]);
  assert.equal(pulled.code, 0, pulled.stderr);
  assert.deepEqual(readFileSync(again), readFileSync(file));
  const missing = await meshctl(srv.meshconfigPath, ['backup', 'pull', 'nope', '-o', join(here, 'x')]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /NotFound/);

  const ok = await meshctl(srv.meshconfigPath, ['backup', 'verify', file]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /verified backup one of mesh sha256:[0-9a-f]{64}\n/);

  const bad = join(here, 'bad.meshbackup');
  const buf = readFileSync(file);
  buf[buf.indexOf('meshctl-store-snapshot') + 2] ^= 1;
  writeFileSync(bad, buf);
  const flipped = await meshctl(srv.meshconfigPath, ['backup', 'verify', bad]);
  assert.equal(flipped.code, 1);
  assert.match(
    flipped.stderr,
    /error: .*bad\.meshbackup: corrupt archive: member store\/snapshot\.jsonl does not match/,
  );
  assert.doesNotMatch(flipped.stderr, /MESHCTL_DEBUG/, 'a known refusal, not a crash');

  const foreign = await meshctl(other.meshconfigPath, ['backup', 'verify', file]);
  assert.equal(foreign.code, 1);
  assert.match(foreign.stderr, /the archive is of another mesh/);
  const foreignRestore = await meshctl(other.meshconfigPath, [
    'backup',
    'restore',
    file,
    '--data-dir',
    join(here, 'wrong'),
    '--node',
    'n',
  ]);
  assert.equal(foreignRestore.code, 1);
  assert.match(foreignRestore.stderr, /another mesh/);
  assert.equal(existsSync(join(here, 'wrong')), false);

  const target = join(here, 'restored');
  const restored = await meshctl(srv.meshconfigPath, ['backup', 'restore', file, '--data-dir', target, '--node', 'n']);
  assert.equal(restored.code, 0, restored.stderr);
  assert.match(restored.stdout, /every change made after it is lost/);
  assert.match(restored.stdout, /mesh-control-plane --data-dir .*restored --node n --restore/);
  assert.match(restored.stdout, /admin token of your meshconfig is kept/);
  assert.ok(existsSync(join(target, 'store', 'snapshot.jsonl')));
  assert.ok(existsSync(join(target, 'admin.meshconfig')));
  const twice = await meshctl(srv.meshconfigPath, ['backup', 'restore', file, '--data-dir', target, '--node', 'n']);
  assert.equal(twice.code, 1);
  assert.match(twice.stderr, /not empty/);
});
