// kubectl (v1.32) against the real server over HTTPS, with no extra flags: what it reads. Writes are in
// kubectl-writes.test.ts. kubectl tries aggregated discovery first; the plain JSON answers make it fall back
// to the legacy documents. It reads /openapi/v3 (explain, and to find that the server validates fields).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { startServer, type TestServer } from '../harness.ts';
import { hasKubectl, kubectlArgs, kubectlEnv, runKubectl } from './kubectl-helpers.ts';

const API = '/apis/meshctl.dev/v1alpha1';
const skip = !hasKubectl && 'kubectl is not installed';

let srv: TestServer;
let work: string;
const kubectl = (...args: string[]): ReturnType<typeof runKubectl> => runKubectl(srv, work, args);

function node(name: string, site: string, labels: Record<string, string> = {}): Record<string, unknown> {
  return {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name, labels },
    spec: { site, endpoint: `192.0.2.${name.length}:51820` },
  };
}

before(async () => {
  if (!hasKubectl) return;
  work = mkdtempSync(join(tmpdir(), 'meshctl-kubectl-'));
  srv = await startServer();
  for (const n of [node('kr-b', 'office', { role: 'db' }), node('kr-a', 'home', { role: 'web' })])
    assert.equal((await srv.request('POST', `${API}/nodes`, n)).status, 201);
});
after(async () => {
  if (!hasKubectl) return;
  await srv.stop();
  rmSync(work, { recursive: true, force: true });
});

test('kubectl version and api-resources: nodes are ours, core has events only', { skip }, async () => {
  const v = await kubectl('version', '-o', 'json');
  assert.equal(v.code, 0, v.stderr);
  const info = JSON.parse(v.stdout) as { serverVersion: { gitVersion: string } };
  assert.match(info.serverVersion.gitVersion, /^v1\.32\.0-meshctl\./);
  const r = await kubectl('api-resources');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^nodes\s+no\s+meshctl\.dev\/v1alpha1\s+false\s+Node$/m);
  assert.match(r.stdout, /^meshes\s+meshctl\.dev\/v1alpha1\s+false\s+Mesh$/m);
  assert.match(r.stdout, /^events\s+v1\s+true\s+Event$/m);
  const core = r.stdout.split('\n').filter((l) => /\sv1\s/.test(l));
  assert.equal(core.length, 1, `only events in core v1:\n${core.join('\n')}`);
});

test(
  'kubectl get: table, -o wide|yaml|json|name|jsonpath|custom-columns, -l, --sort-by, --show-labels, --field-selector',
  { skip },
  async () => {
    const table = await kubectl('get', 'nodes');
    assert.equal(table.code, 0, table.stderr);
    const [header, ...rows] = table.stdout.trim().split('\n');
    assert.match(header, /^NAME\s+SITE\s+REACHABLE\s+LAST SEEN\s+DESIRED\s+APPLIED\s+DECLARATION\s+AGE$/);
    assert.match(
      rows.find((l) => l.startsWith('kr-a'))!,
      /^kr-a\s+home\s+.*\d+s$/,
    );
    assert.match((await kubectl('get', 'no', 'kr-a', '-o', 'wide')).stdout, /ENDPOINT[\s\S]*192\.0\.2\.4:51820/);
    const yaml = parseYaml((await kubectl('get', 'nodes', '-l', 'role=web', '-o', 'yaml')).stdout) as {
      kind: string;
      items: { kind: string; metadata: { name: string } }[];
    };
    assert.equal(yaml.kind, 'List');
    assert.deepEqual(
      yaml.items.map((i) => `${i.kind}/${i.metadata.name}`),
      ['Node/kr-a'],
    );
    const json = JSON.parse((await kubectl('get', 'node', 'kr-b', '-o', 'json')).stdout) as { spec: { site: string } };
    assert.equal(json.spec.site, 'office');
    assert.equal(
      (await kubectl('get', 'nodes', '-o', 'name')).stdout,
      'node.meshctl.dev/kr-a\nnode.meshctl.dev/kr-b\n',
    );
    const jp = await kubectl('get', 'nodes', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.spec.site} {end}');
    assert.equal(jp.stdout, 'kr-a=home kr-b=office ');
    const cc = await kubectl(
      'get',
      'nodes',
      '-o',
      'custom-columns=N:.metadata.name,S:.spec.site',
      '--sort-by=.spec.site',
    );
    assert.match(cc.stdout, /^N\s+S\nkr-a\s+home\nkr-b\s+office\n$/);
    const desc = await kubectl('get', 'nodes', '--sort-by=.spec.site', '-o', 'name');
    assert.equal(desc.stdout, 'node.meshctl.dev/kr-a\nnode.meshctl.dev/kr-b\n');
    const bySite = await kubectl('get', 'nodes', '--sort-by=.metadata.labels.role', '-o', 'name');
    assert.equal(bySite.stdout, 'node.meshctl.dev/kr-b\nnode.meshctl.dev/kr-a\n');
    assert.match((await kubectl('get', 'nodes', '--show-labels')).stdout, /^kr-a\s.*role=web$/m);
    const fs = await kubectl('get', 'nodes', '--field-selector', 'spec.site=office', '-o', 'name');
    assert.equal(fs.stdout, 'node.meshctl.dev/kr-b\n', fs.stderr);
  },
);

test(
  'kubectl describe shows the events of a node (core/v1 view) and kubectl get events lists them',
  { skip },
  async () => {
    const ev = {
      apiVersion: 'meshctl.dev/v1alpha1',
      kind: 'Event',
      metadata: { name: 'kr-a-unreachable' },
      involvedObject: { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', name: 'kr-a' },
      type: 'Warning',
      reason: 'Unreachable',
      message: 'no heartbeat for 90s',
      source: { component: 'reachability-controller' },
      count: 1,
    };
    assert.equal((await srv.request('POST', `${API}/events`, ev)).status, 201);
    const d = await kubectl('describe', 'node', 'kr-a');
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, /^Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message\n/m);
    assert.match(d.stdout, /^\s+Warning\s+Unreachable\s+\S+\s+reachability-controller\s+no heartbeat for 90s$/m);
    assert.match((await kubectl('describe', 'node', 'kr-b')).stdout, /^Events:\s+<none>$/m);
    const events = await kubectl('get', 'events');
    assert.match(events.stdout, /^kr-a-unreachable\s+Warning\s+Unreachable\s+kr-a\s/m, events.stderr);
    const watched = await kubectl('get', 'events', '-w', '--request-timeout=5s');
    assert.match(watched.stdout, /^kr-a-unreachable\s+Warning\s+Unreachable\s+kr-a\s/m, watched.stderr);
    assert.equal(
      watched.code,
      0,
      `kubectl get events -w ends at its request timeout without an error: ${watched.stderr}`,
    );
  },
);

test('kubectl explain reads our schemas', { skip }, async () => {
  const e = await kubectl('explain', 'nodes.spec');
  assert.equal(e.code, 0, e.stderr);
  assert.match(e.stdout, /^KIND:\s+Node$/m);
  assert.match(e.stdout, /^\s+endpoint\s+<string>$/m);
  assert.match(e.stdout, /Co-location group/);
  const m = await kubectl('explain', 'modules.spec.resources');
  assert.match(m.stdout, /^FIELD: resources <\[\]Object>$/m, m.stderr);
  const ev = await kubectl('explain', 'events.involvedObject');
  assert.match(ev.stdout, /^KIND:\s+Event\nVERSION:\s+v1$/m, ev.stderr);
  assert.match(ev.stdout, /The object the event is about/);
});

test('kubectl wait --for=condition waits until the status says so', { skip }, async () => {
  const waiting = kubectl('wait', '--for=condition=Reachable', 'node/kr-b', '--timeout=60s');
  const status = {
    status: {
      conditions: [
        {
          type: 'Reachable',
          status: 'True',
          reason: 'Heartbeat',
          message: 'heard from the agent',
          lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        },
      ],
    },
  };
  const patched = await kubectl(
    'patch',
    'node',
    'kr-b',
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify(status),
  );
  assert.equal(patched.stdout, 'node.meshctl.dev/kr-b patched\n', patched.stderr);
  const w = await waiting;
  assert.equal(w.code, 0, w.stderr);
  assert.equal(w.stdout, 'node.meshctl.dev/kr-b condition met\n');
});

test('kubectl get -w sees a change', { skip }, async (t) => {
  const child = spawn('kubectl', kubectlArgs(srv, work, ['get', 'nodes', '-w']), {
    env: kubectlEnv(work),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  const waitFor = async (re: RegExp): Promise<void> => {
    const end = Date.now() + 30_000;
    while (!re.test(out)) {
      if (Date.now() > end) throw new Error(`kubectl get -w did not print ${re}; got:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await waitFor(/^kr-a\s+home\s/m);
  const merge = { 'content-type': 'application/merge-patch+json' };
  await srv.request('PATCH', `${API}/nodes/kr-a`, { spec: { site: 'away' } }, merge);
  await waitFor(/^kr-a\s+away\s/m);
  child.kill('SIGTERM');
});
