// meshctl describe, delete and diff against the real server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Event as MeshEvent, Node } from '../../api/v1alpha1/generated/index.ts';
import { cliSuite } from './cli-harness.ts';

const s = cliSuite('meshctl-cli-describe-');
const { meshctl } = s;
const dir = s.dir;
const node = (name: string, site = 'home'): Node => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Node',
  metadata: { name, labels: { role: 'web' } },
  spec: { site },
});

function event(name: string, reason: string, last: string, count = 1): MeshEvent {
  return {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Event',
    metadata: { name },
    involvedObject: { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', name: 'described' },
    type: reason === 'Lost' ? 'Warning' : 'Normal',
    reason,
    message: `${reason} happened`,
    count,
    firstTimestamp: new Date(Date.now() - 600_000).toISOString(),
    lastTimestamp: last,
    source: { component: 'mesh-agent', host: 'described' },
  };
}

test('describe shows metadata, spec, conditions as a table and the events sorted by time', async () => {
  const created = await s.client.create('nodes', node('described'));
  await s.client.updateStatus('nodes', {
    ...created,
    status: {
      reachable: false,
      conditions: [
        {
          type: 'Reachable',
          status: 'False',
          reason: 'HeartbeatMissed',
          message: 'no heartbeat for 60s',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    },
  });
  const none = await meshctl('describe', 'node', 'described');
  assert.match(none.stdout, /\nEvents: {2}<none>\n$/);
  await s.client.create('events', event('described.b', 'Lost', new Date(Date.now() - 5_000).toISOString(), 3));
  await s.client.create('events', event('described.a', 'Joined', new Date(Date.now() - 60_000).toISOString()));
  await s.client.create('events', {
    ...event('other.a', 'Joined', new Date().toISOString()),
    involvedObject: { kind: 'Node', name: 'other' },
  });
  const r = await meshctl('describe', 'node', 'described');
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /^Name: +described\nLabels: +role=web\nAnnotations: +<none>\nAPI Version: +meshctl\.dev\/v1alpha1\nKind: +Node\n/,
  );
  assert.match(
    r.stdout,
    /\nMetadata:\n {2}Creation Timestamp: +\S+\n {2}Generation: +1\n {2}Resource Version: +\d+\n {2}UID: +\S+\n/,
  );
  assert.match(r.stdout, /\nSpec:\n {2}Site: +home\n/);
  assert.match(
    r.stdout,
    /\nStatus:\n {2}Reachable: +false\n {2}Conditions:\n {4}Type +Status +Reason +LastTransitionTime +Message\n {4}-+ +-+ .*\n {4}Reachable +False +HeartbeatMissed +2026-01-01T00:00:00Z +no heartbeat for 60s\n/,
  );
  const events = r.stdout
    .slice(r.stdout.indexOf('\nEvents:\n') + 1)
    .trimEnd()
    .split('\n');
  assert.match(events[1], /^ {2}Type +Reason +Age +From +Message$/);
  assert.match(events[3], /^ {2}Normal +Joined +6\ds +mesh-agent, described +Joined happened$/);
  assert.match(events[4], /^ {2}Warning +Lost +\d+s \(x3 over 10m\) +mesh-agent, described +Lost happened$/);
  assert.equal(events.length, 5, "the other node's event is not listed");
  const missing = await meshctl('describe', 'node', 'ghost');
  assert.equal(missing.code, 1);
  assert.equal(missing.stderr, 'Error from server (NotFound): nodes "ghost" not found\n');
});

test("describe assignment lists the events about that assignment (the Assignment controller's), or <none>", async () => {
  await s.client.create('assignments', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Assignment',
    metadata: { name: 'web-on-described' },
    spec: { module: 'web', node: 'described' },
  });
  const none = await meshctl('describe', 'assignment', 'web-on-described');
  assert.equal(none.code, 0, none.stderr);
  assert.match(none.stdout, /\nEvents: {2}<none>\n$/);
  await s.client.create('events', {
    ...event('web-on-described.a', 'Applied', new Date(Date.now() - 120_000).toISOString()),
    involvedObject: { kind: 'Assignment', name: 'web-on-described' },
    message: 'node "described" applied all 1 resources of version 1.0.0',
    source: { component: 'assignment-controller' },
  });
  const r = await meshctl('describe', 'assignment', 'web-on-described');
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    // 2m, or 2m1s when a loaded machine takes a second between the create and the describe (kube's HumanDuration).
    /\nEvents:\n {2}Type +Reason +Age +From +Message\n {2}-+ .*\n {2}Normal +Applied +2m(?:\d+s)? +assignment-controller +node "described" applied all 1 resources of version 1\.0\.0\n$/,
  );
});

test('delete by name, by resource/name and -f; NotFound like kubectl; --ignore-not-found; dry run', async () => {
  for (const n of ['d1', 'd2', 'd3', 'd4']) await s.client.create('nodes', node(n));
  const dry = await meshctl('delete', 'node', 'd1', '--dry-run=server');
  assert.equal(dry.stdout, 'node "d1" deleted (server dry run)\n');
  await s.client.get('nodes', 'd1');
  const r = await meshctl('delete', 'nodes', 'd1', 'ghost', 'd2');
  assert.equal(r.code, 1);
  assert.equal(r.stdout, 'node "d1" deleted\nnode "d2" deleted\n');
  assert.equal(r.stderr, 'Error from server (NotFound): nodes "ghost" not found\n');
  assert.equal((await meshctl('delete', 'node/d3')).stdout, 'node "d3" deleted\n');
  const ignored = await meshctl('delete', 'node', 'ghost', '--ignore-not-found');
  assert.deepEqual([ignored.code, ignored.stdout, ignored.stderr], [0, '', '']);
  const file = join(dir, 'd4.yaml');
  writeFileSync(file, 'apiVersion: meshctl.dev/v1alpha1\nkind: Node\nmetadata:\n  name: d4\nspec:\n  site: home\n');
  assert.equal((await meshctl('delete', '-f', file)).stdout, 'node "d4" deleted\n');
  const names = (await s.client.list('nodes')).items.map((o) => o.metadata.name);
  assert.ok(!names.some((n) => /^d\d$/.test(n as string)), names.join());
  const usage = await meshctl('delete', 'nodes');
  assert.equal(usage.code, 2);
});

test('diff: exit 1 with a unified diff for changes and new objects, exit 0 when up to date, never writes', async () => {
  const file = join(dir, 'diffed.yaml');
  writeFileSync(file, 'apiVersion: meshctl.dev/v1alpha1\nkind: Node\nmetadata:\n  name: diffed\nspec:\n  site: home\n');
  const fresh = await meshctl('diff', '-f', file);
  assert.equal(fresh.code, 1, fresh.stderr);
  assert.match(
    fresh.stdout,
    /^diff -u -N live\/nodes\.meshctl\.dev\/diffed merged\/nodes\.meshctl\.dev\/diffed\n--- live\/\S+\n\+\+\+ merged\/\S+\n@@ -0,0 \+1,\d+ @@\n/,
  );
  assert.match(fresh.stdout, /\n\+ {2}site: home\n/);
  assert.deepEqual((await s.client.list('nodes', { fieldSelector: 'metadata.name=diffed' })).items, []);
  assert.equal((await meshctl('apply', '-f', file)).stdout, 'node/diffed created\n');
  const same = await meshctl('diff', '-f', file);
  assert.deepEqual([same.code, same.stdout, same.stderr], [0, '', '']);
  writeFileSync(file, 'apiVersion: meshctl.dev/v1alpha1\nkind: Node\nmetadata:\n  name: diffed\nspec:\n  site: lab\n');
  const changed = await meshctl('diff', '-f', file);
  assert.equal(changed.code, 1);
  assert.match(changed.stdout, /\n-  site: home\n\+  site: lab\n/);
  assert.ok(!/resourceVersion|uid:|creationTimestamp|last-applied/.test(changed.stdout), changed.stdout);
  assert.equal(((await s.client.get('nodes', 'diffed')).spec as { site: string }).site, 'home');
  const broken = join(dir, 'broken.yaml');
  writeFileSync(broken, 'kind: [\n');
  assert.equal((await meshctl('diff', '-f', broken)).code, 2);
});
