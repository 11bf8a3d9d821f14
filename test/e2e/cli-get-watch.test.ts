// meshctl get -w across a real control-plane restart (issue 8): it waits the outage out (saying so once on
// stderr), goes on printing changes from the restarted control plane, and prints a row only when what the
// row shows changed (a write nothing in the row shows, like a heartbeat's second status write, prints none).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../../api/client/http-client.ts';
import { freePort, waitFor } from '../../agent/testing.ts';
import { spawnControlPlane, type ControlPlaneProcess } from '../harness.ts';
import { buildCli } from './cli-harness.ts';

test('get -w goes on across a control-plane restart and prints a row only when the row changed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-get-watch-'));
  const listen = `127.0.0.1:${await freePort()}`;
  const cps: ControlPlaneProcess[] = [];
  const [cli, first] = await Promise.all([buildCli(), spawnControlPlane({ dataDir: join(dir, 'cp'), listen })]);
  cps.push(first);
  const clients = [createClient(first.config)];
  t.after(async () => {
    for (const c of clients) c.close();
    for (const cp of cps) await cp.kill();
    cli.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });
  await clients[0].create('nodes', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name: 'alpha' },
    spec: { site: 'home', endpoint: '192.0.2.1:51820' },
  });
  // The row settles first: the declaration controller renders alpha's Declaration (DESIRED 1) after the create.
  await waitFor(
    async () => (await clients[0].get('nodes', 'alpha')).status?.declaration?.desiredGeneration !== undefined,
    15_000,
    'the Declaration rendered',
  );
  const watch = cli.start(['get', 'nodes', '-w'], { config: first.meshconfigPath });
  t.after(() => watch.kill('SIGKILL'));
  const rows = (): string[] =>
    watch
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith('alpha '));
  const fail = (e: Error): never => {
    throw new Error(`${e.message}\nstdout:\n${watch.stdout()}\nstderr:\n${watch.stderr()}`);
  };
  await waitFor(() => rows().length === 1, 15_000, 'the initial row').catch(fail);

  // A change no column shows (a label, without --show-labels), then one the SITE column shows: one new row.
  await clients[0].patch('nodes', 'alpha', { metadata: { labels: { unseen: 'yes' } } });
  await clients[0].patch('nodes', 'alpha', { spec: { site: 'lab' } });
  await waitFor(() => rows().some((r) => /^alpha +lab /.test(r)), 10_000, 'the row for site lab').catch(fail);
  assert.equal(rows().length, 2, `the label change printed no row:\n${watch.stdout()}`);

  // The control plane goes down: the watch says so once and keeps running.
  await first.kill();
  cps.length = 0;
  await waitFor(
    () => /is unreachable .*; watching again once it answers\n/.test(watch.stderr()),
    15_000,
    'the notice',
  ).catch(fail);

  // It comes back on the same data dir and port: the watch finds it and prints the next change.
  const second = await spawnControlPlane({ dataDir: join(dir, 'cp'), listen });
  cps.push(second);
  const client = createClient(second.config);
  clients.push(client);
  await client.patch('nodes', 'alpha', { spec: { site: 'office' } });
  await waitFor(() => rows().some((r) => /^alpha +office /.test(r)), 20_000, 'the row for site office').catch(fail);
  assert.equal(rows().length, 3, `the relist after the restart reprinted no unchanged row:\n${watch.stdout()}`);
  assert.equal(watch.stderr().match(/watching again/g)?.length, 1, watch.stderr());

  watch.kill('SIGINT');
  const done = await watch.exited;
  assert.equal(done.code, 0, done.stderr);
});
