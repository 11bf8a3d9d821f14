// kubectl (v1.32) against the real server over HTTPS, using DIR/admin.meshconfig as its kubeconfig.
//
// What works, and with which flags:
// - `kubectl version`, `api-resources`, `get` (server-side Table columns, `-o wide|yaml|json|jsonpath`, `-l`,
//   `--field-selector`), `get -w`, `describe`, `label`, `annotate`, `create`, `replace`, `delete` (also `-f` and
//   `--dry-run=server`), `patch --type=merge`, and `apply -f` with `--validate=false`.
// - `apply` and `create` need `--validate=false`: the server serves no OpenAPI documents (`/openapi/v2|v3` are
//   404, and kubectl says "failed to download openapi"). Client-side apply then falls back to JSON merge patch,
//   which is what we serve.
// - Refused with 415 UnsupportedMediaType (kubectl prints the server's message): `kubectl patch` without
//   `--type=merge` (strategic merge patch is its default), `--type=json`, and `apply --server-side`.
// - kubectl tries aggregated discovery first; the plain JSON answers make it fall back to the legacy documents.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { startServer, type TestServer } from '../harness.ts';

const hasKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
const API = '/apis/meshctl.dev/v1alpha1';

let srv: TestServer;
let work: string;

function kubectlArgs(args: string[]): string[] {
  return ['--kubeconfig', srv.meshconfigPath, '--cache-dir', join(work, 'cache'), ...args];
}

function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'kubectl',
      kubectlArgs(args),
      { env: { ...process.env, KUBECONFIG: '', HOME: work }, timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({
          code: err ? Number((err as NodeJS.ErrnoException & { code?: unknown }).code ?? 1) || 1 : 0,
          stdout,
          stderr,
        });
      },
    );
  });
}

const MANIFEST = `apiVersion: meshctl.dev/v1alpha1
kind: Node
metadata:
  name: kc-a
  labels:
    role: web
spec:
  site: home
  endpoint: 192.0.2.10:51820
---
apiVersion: meshctl.dev/v1alpha1
kind: Node
metadata:
  name: kc-b
spec:
  site: office
`;

before(async () => {
  if (!hasKubectl) return;
  work = mkdtempSync(join(tmpdir(), 'meshctl-kubectl-'));
  srv = await startServer();
});
after(async () => {
  if (!hasKubectl) return;
  await srv.stop();
  rmSync(work, { recursive: true, force: true });
});

test('kubectl version and api-resources', { skip: !hasKubectl && 'kubectl is not installed' }, async () => {
  const v = await kubectl('version', '-o', 'json');
  assert.equal(v.code, 0, v.stderr);
  const info = JSON.parse(v.stdout) as { serverVersion: { gitVersion: string; major: string; minor: string } };
  assert.match(info.serverVersion.gitVersion, /^v1\.32\.0-meshctl\./);
  const r = await kubectl('api-resources');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^nodes\s+no\s+meshctl\.dev\/v1alpha1\s+false\s+Node$/m);
  assert.match(r.stdout, /^meshes\s+meshctl\.dev\/v1alpha1\s+false\s+Mesh$/m);
});

test(
  'kubectl apply (--validate=false), get with columns, -o yaml, delete',
  { skip: !hasKubectl && 'kubectl is not installed' },
  async () => {
    const file = join(work, 'nodes.yaml');
    writeFileSync(file, MANIFEST);
    const created = await kubectl('apply', '--validate=false', '-f', file);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stdout, 'node.meshctl.dev/kc-a created\nnode.meshctl.dev/kc-b created\n');
    const same = await kubectl('apply', '--validate=false', '-f', file);
    assert.equal(same.stdout, 'node.meshctl.dev/kc-a unchanged\nnode.meshctl.dev/kc-b unchanged\n');
    writeFileSync(file, MANIFEST.replace('site: office', 'site: lab'));
    const changed = await kubectl('apply', '--validate=false', '-f', file);
    assert.equal(changed.stdout, 'node.meshctl.dev/kc-a unchanged\nnode.meshctl.dev/kc-b configured\n', changed.stderr);
    assert.equal((await srv.request('GET', `${API}/nodes/kc-b`)).json.spec.site, 'lab');

    const table = await kubectl('get', 'nodes');
    assert.equal(table.code, 0, table.stderr);
    const [header, ...rows] = table.stdout.trim().split('\n');
    assert.match(header, /^NAME\s+SITE\s+REACHABLE\s+LAST SEEN\s+DESIRED\s+APPLIED\s+DECLARATION\s+AGE$/);
    assert.match(
      rows.find((l) => l.startsWith('kc-a'))!,
      /^kc-a\s+home\s+.*\d+s$/,
    );
    assert.match((await kubectl('get', 'no', 'kc-a', '-o', 'wide')).stdout, /ENDPOINT[\s\S]*192\.0\.2\.10:51820/);
    const yaml = await kubectl('get', 'nodes', '-l', 'role=web', '-o', 'yaml');
    const list = parseYaml(yaml.stdout) as {
      kind: string;
      items: { kind: string; metadata: { name: string; annotations: Record<string, string> } }[];
    };
    assert.equal(list.kind, 'List');
    assert.deepEqual(
      list.items.map((i) => `${i.kind}/${i.metadata.name}`),
      ['Node/kc-a'],
    );
    assert.ok(list.items[0].metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);

    const strict = await kubectl('apply', '-f', file);
    assert.notEqual(strict.code, 0, 'without --validate=false kubectl wants OpenAPI documents');
    assert.match(strict.stderr, /--validate=false/);

    const del = await kubectl('delete', '-f', file);
    assert.equal(del.code, 0, del.stderr);
    assert.equal(del.stdout, 'node.meshctl.dev "kc-a" deleted\nnode.meshctl.dev "kc-b" deleted\n');
    const gone = await kubectl('get', 'node', 'kc-a');
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /Error from server \(NotFound\): nodes\.meshctl\.dev "kc-a" not found/);
  },
);

test('kubectl get -w sees a change', { skip: !hasKubectl && 'kubectl is not installed' }, async (t) => {
  await srv.request('POST', `${API}/nodes`, {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name: 'kc-w' },
    spec: { site: 'home' },
  });
  const child = spawn('kubectl', kubectlArgs(['get', 'nodes', '-w']), {
    env: { ...process.env, KUBECONFIG: '', HOME: work },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  const waitFor = async (re: RegExp): Promise<void> => {
    const end = Date.now() + 15_000;
    while (!re.test(out)) {
      if (Date.now() > end) throw new Error(`kubectl get -w did not print ${re}; got:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await waitFor(/^kc-w\s+home\s/m);
  await srv.request(
    'PATCH',
    `${API}/nodes/kc-w`,
    { spec: { site: 'away' } },
    { 'content-type': 'application/merge-patch+json' },
  );
  await waitFor(/^kc-w\s+away\s/m);
  child.kill('SIGTERM');
});

test(
  'kubectl patch --type=merge works; other patch types get a clear 415',
  { skip: !hasKubectl && 'kubectl is not installed' },
  async () => {
    await srv.request('POST', `${API}/nodes`, {
      apiVersion: 'meshctl.dev/v1alpha1',
      kind: 'Node',
      metadata: { name: 'kc-p' },
      spec: { site: 'home' },
    });
    const merge = await kubectl('patch', 'node', 'kc-p', '--type=merge', '-p', '{"spec":{"site":"lab"}}');
    assert.equal(merge.stdout, 'node.meshctl.dev/kc-p patched\n', merge.stderr);
    const strategic = await kubectl('patch', 'node', 'kc-p', '-p', '{"spec":{"site":"x"}}');
    assert.equal(strategic.code, 1);
    assert.match(
      strategic.stderr,
      /application\/strategic-merge-patch\+json.*supported: application\/merge-patch\+json/,
    );
    const dry = await kubectl('delete', 'node', 'kc-p', '--dry-run=server');
    assert.equal(dry.stdout, 'node.meshctl.dev "kc-p" deleted (server dry run)\n');
    assert.equal((await srv.request('GET', `${API}/nodes/kc-p`)).json.spec.site, 'lab');
  },
);
