// `mesh-agent set-server` on a stopped agent: the URL is saved in the agent's store, and the next start (from
// the store alone) connects there with the same CA pin and credential; bad usage is refused with exit code 2.
// (A running agent switching in process is the restore drill's path: test/e2e/backup-restore.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../test/harness.ts';
import { setServerOf } from '../test/e2e/restore-drill.ts';
import { killServices, spawnAgent, waitFor } from './testing.ts';

test('set-server on a stopped agent: saved in its store; the next start connects to the new URL without re-joining', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-set-server-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const dataDir = join(dir, 'cp');
  const first = await startServer({ dataDir });
  t.after(() => first.stop());
  const stateDir = join(dir, 'state');
  const root = join(dir, 'root');
  mkdirSync(root);
  t.after(() => killServices(stateDir));
  const agent = await spawnAgent([
    '--state-dir',
    stateDir,
    '--name',
    'n1',
    '--root',
    root,
    '--config',
    first.meshconfigPath,
  ]);
  await waitFor(() => first.store.get('nodes', 'n1') !== undefined, 20_000, 'the agent to register its Node');
  await agent.kill('SIGTERM');
  await first.stop();

  const moved = await startServer({ dataDir }); // same CA and credentials, another port
  t.after(() => moved.stop());
  assert.notEqual(moved.url, first.url);
  const usage = await setServerOf(stateDir, 'not a url');
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /is not a URL/);
  const r = await setServerOf(stateDir, moved.url);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Saved https:\/\/127\.0\.0\.1:\d+ for the agent/);

  const before = moved.store.get('nodes', 'n1')?.status?.controlPlaneLastContact;
  const again = await spawnAgent(['--state-dir', stateDir]);
  t.after(() => again.kill('SIGKILL'));
  await waitFor(
    () => moved.store.get('nodes', 'n1')?.status?.controlPlaneLastContact !== before,
    20_000,
    'the restarted agent to heartbeat to the new URL',
  );
  const connected = again.lines().find((l) => l.msg === 'Connected to control plane');
  assert.equal(connected?.server, moved.url);
});
