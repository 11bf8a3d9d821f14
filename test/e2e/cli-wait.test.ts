// meshctl wait --for=condition=X[=value] | --for=delete against the real server (statuses written through
// /status here, as the controllers would), and `get -w -o json`: one object or event per line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../agent/testing.ts';
import { cliSuite } from './cli-harness.ts';

const s = cliSuite('meshctl-cli-wait-');
const { meshctl } = s;
const start = (...args: string[]) => s.cli.start(args, { config: s.server.meshconfigPath });

async function createNode(name: string, labels: Record<string, string> = {}): Promise<void> {
  await s.client.create('nodes', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name, labels },
    spec: { site: 'home' },
  });
}

async function setReachable(name: string, status: 'True' | 'False'): Promise<void> {
  const lastTransitionTime = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const condition = { type: 'Reachable', status, reason: status === 'True' ? 'Heartbeat' : 'NoHeartbeat', message: '' };
  await s.client.patch(
    'nodes',
    name,
    { status: { conditions: [{ ...condition, lastTransitionTime }] } },
    { subresource: 'status' },
  );
}

test('wait --for=condition returns once the condition holds, True by default or the value given', async () => {
  await createNode('wt-a');
  const waiting = start('wait', '--for=condition=Reachable', 'node/wt-a', '--timeout=60s');
  const waitingFalse = start('wait', '--for=condition=reachable=false', 'nodes', 'wt-a', '--timeout=60s');
  await setReachable('wt-a', 'False');
  const f = await waitingFalse.exited;
  assert.equal(f.code, 0, f.stderr);
  assert.equal(f.stdout, 'node/wt-a condition met\n');
  await setReachable('wt-a', 'True');
  const t = await waiting.exited;
  assert.equal(t.code, 0, t.stderr);
  assert.equal(t.stdout, 'node/wt-a condition met\n');
});

test('wait with -l waits for every matched object; a selector matching none and a missing object fail', async () => {
  await createNode('wt-l1', { group: 'g1' });
  await createNode('wt-l2', { group: 'g1' });
  await setReachable('wt-l1', 'True');
  const waiting = start('wait', '--for=condition=Reachable', 'nodes', '-l', 'group=g1', '--timeout=60s');
  await setReachable('wt-l2', 'True');
  const r = await waiting.exited;
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'node/wt-l1 condition met\nnode/wt-l2 condition met\n');

  const none = await meshctl('wait', '--for=condition=Reachable', 'nodes', '-l', 'group=none');
  assert.equal(none.code, 1);
  assert.equal(none.stderr, 'error: no matching resources found\n');
  const missing = await meshctl('wait', '--for=condition=Reachable', 'node/wt-nope');
  assert.equal(missing.code, 1);
  assert.equal(missing.stderr, 'Error from server (NotFound): nodes "wt-nope" not found\n');
});

test('wait times out with kubectl message; --for=delete returns once the object is gone; --for=jsonpath', async () => {
  await createNode('wt-d');
  const timedOut = await meshctl('wait', '--for=condition=Reachable', 'node/wt-d', '--timeout=1s');
  assert.equal(timedOut.code, 1);
  assert.equal(timedOut.stderr, 'error: timed out waiting for the condition on nodes/wt-d\n');
  const waiting = start('wait', '--for=delete', 'node/wt-d', '--timeout=60s');
  await s.client.delete('nodes', 'wt-d');
  const r = await waiting.exited;
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'node/wt-d deleted\n');
  await createNode('wt-j');
  const spec = start('wait', '--for=jsonpath={.spec.site}=lab', 'node/wt-j', '--timeout=60s');
  await s.client.patch('nodes', 'wt-j', { spec: { site: 'lab' } });
  const j = await spec.exited;
  assert.equal(j.code, 0, j.stderr);
  assert.equal(j.stdout, 'node/wt-j condition met\n');
  const bad = await meshctl('wait', '--for=ready', 'node/wt-d');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unrecognized condition: "ready"/);
});

test('get -w -o json prints one object a line; --output-watch-events one {type, object} a line', async (t) => {
  await createNode('wj-a', { watch: 'json' });
  const plain = start('get', 'nodes', '-l', 'watch=json', '-w', '-o', 'json');
  const events = start('get', 'nodes', '-l', 'watch=json', '-w', '-o', 'json', '--output-watch-events');
  t.after(() => {
    plain.kill('SIGKILL');
    events.kill('SIGKILL');
  });
  const lines = (s: string): string[] => s.split('\n').filter(Boolean);
  await waitFor(() => lines(plain.stdout()).length === 1 && lines(events.stdout()).length === 1, 15_000, 'the list');
  await s.client.patch('nodes', 'wj-a', { spec: { site: 'lab' } });
  await s.client.delete('nodes', 'wj-a');
  await waitFor(() => lines(plain.stdout()).length === 3 && lines(events.stdout()).length === 3, 15_000, 'the events');
  const objs = lines(plain.stdout()).map(
    (l) => JSON.parse(l) as { metadata: { name: string }; spec: { site: string } },
  );
  assert.deepEqual(
    objs.map((o) => [o.metadata.name, o.spec.site]),
    [
      ['wj-a', 'home'],
      ['wj-a', 'lab'],
      ['wj-a', 'lab'],
    ],
  );
  const evs = lines(events.stdout()).map((l) => JSON.parse(l) as { type: string; object: { kind: string } });
  assert.deepEqual(
    evs.map((e) => [e.type, e.object.kind]),
    [
      ['ADDED', 'Node'],
      ['MODIFIED', 'Node'],
      ['DELETED', 'Node'],
    ],
  );
  plain.kill('SIGINT');
  assert.equal((await plain.exited).code, 0);
});
