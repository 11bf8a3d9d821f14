// The Mesh singleton and the samples on a real mesh, with the built meshctl and control plane.
// - The samples: `meshctl init`, its store served by the control plane, the user's own objects — their module
//   "web" among them, a name the samples once used — then `meshctl apply -f manifests/samples/` and `meshctl
//   delete -f manifests/samples/`. The samples create only their own objects and delete only those; the user's
//   objects and the Mesh are left as they were.
// - init on a data directory a control plane served first: that control plane created the Mesh with the
//   defaults (controllers/ensure-mesh.ts); init finishes it rather than calling the directory initialised.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient, type HttpClient } from '../../api/client/http-client.ts';
import { controlPlanePaths } from '../../api/server/pki/first-start.ts';
import { openStore } from '../../api/store/index.ts';
import { loadMeshconfig } from '../../api/client/meshconfig.ts';
import { KINDS } from '../../api/v1alpha1/kinds.ts';
import { freePort } from '../../agent/testing.ts';
import { eventually } from '../eventually.ts';
import { REPO_ROOT } from '../harness.ts';
import { buildCli, type BuiltCli } from './cli-harness.ts';
import { initWorld, runControlPlane } from './init-helpers.ts';

const SAMPLES = join(REPO_ROOT, 'manifests', 'samples');

/** The user's own objects: a module "web" of their own, its assignment to their node, a route, a second node. */
const MINE = `apiVersion: meshctl.dev/v1alpha1
kind: Module
metadata:
  name: web
spec:
  version: 2.3.0
  resources:
    - id: dir
      kind: Directory
      spec:
        path: /srv/my-site
---
apiVersion: meshctl.dev/v1alpha1
kind: Assignment
metadata:
  name: web-on-cp-1
spec:
  module: web
  node: cp-1
---
apiVersion: meshctl.dev/v1alpha1
kind: Route
metadata:
  name: web
spec:
  host: www.my-site.example
  node: cp-1
  port: 443
---
apiVersion: meshctl.dev/v1alpha1
kind: Node
metadata:
  name: node-b
spec:
  site: office
`;

/**
 * Kinds whose status a controller writes while the test runs: compared by generation, not resourceVersion. The
 * Mesh too: its status records the recovery clock and backups, and creating the sample Backup takes one
 * (api/server/backup/).
 */
const CONTROLLED = new Set(['nodes', 'assignments', 'declarations', 'certificates', 'routes', 'meshes']);

/**
 * Every object but Events (controllers add those), as `plural/name` → what must not change: its uid and
 * resourceVersion, or for the kinds whose status controllers write, its uid, generation and spec.
 */
async function world(client: HttpClient): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const info of KINDS.filter((k) => k.kind !== 'Event')) {
    for (const o of (await client.list(info.plural)).items) {
      const m = o.metadata;
      out[`${info.plural}/${m.name}`] = CONTROLLED.has(info.plural)
        ? { uid: m.uid, generation: m.generation, spec: (o as { spec?: unknown }).spec }
        : { uid: m.uid, resourceVersion: m.resourceVersion };
    }
  }
  return out;
}

describe('the samples on a mesh made by meshctl init', () => {
  let cli: BuiltCli;
  before(async () => {
    cli = await buildCli();
  });
  after(() => cli.cleanup());

  it("apply then delete of manifests/samples/ leaves the user's objects (module web included) and the Mesh alone", async (t) => {
    const w = initWorld(t, cli);
    const port = await freePort();
    assert.equal((await w.init(['--listen', `127.0.0.1:${port}`])).code, 0);
    const cp = await runControlPlane(cli, ['--data-dir', w.dataDir, '--listen', `127.0.0.1:${port}`, '--node', 'cp-1']);
    t.after(() => cp.stop());
    assert.equal(cp.serving, true, cp.output());
    const client = createClient(loadMeshconfig(w.meshconfig));
    t.after(() => client.close());
    const meshctl = (...args: string[]) => cli.run(args, { config: w.meshconfig });

    const mine = join(w.dir, 'mine.yaml');
    writeFileSync(mine, MINE);
    const created = await meshctl('apply', '-f', mine);
    assert.equal(created.code, 0, created.stderr);
    // The controllers render the user's objects into Declarations (cp-1's gains module web; node-b gets one).
    await eventually(
      async () => {
        const cp1 = (await client.get('declarations', 'cp-1')) as { spec: { resources: Array<{ owner: string }> } };
        assert.ok(
          cp1.spec.resources.some((r) => r.owner === 'web-on-cp-1'),
          'module web is rendered into the Declaration of cp-1',
        );
        await client.get('declarations', 'node-b');
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    const mesh = await client.get('meshes', 'mesh');
    const before = await world(client);
    assert.ok(before['modules/web'] && before['routes/web'] && before['meshes/mesh'], JSON.stringify(before));

    const applied = await meshctl('apply', '-f', SAMPLES);
    assert.equal(applied.code, 0, applied.stderr);
    const lines = applied.stdout.trim().split('\n');
    assert.equal(lines.length, readdirSync(SAMPLES).filter((f) => f.endsWith('.yaml')).length, applied.stdout);
    assert.ok(
      lines.every((l) => / created$/.test(l)),
      `every sample is a new object, none replaced one of the user's:\n${applied.stdout}`,
    );
    assert.ok(lines.includes('module/sample-web created'), applied.stdout);
    const during = await world(client);
    for (const [key, value] of Object.entries(before)) assert.deepEqual(during[key], value, `${key} after apply`);

    const deleted = await meshctl('delete', '-f', SAMPLES);
    assert.equal(deleted.code, 0, `${deleted.stdout}${deleted.stderr}`);
    assert.equal(deleted.stderr, '');
    assert.ok(
      deleted.stdout
        .trim()
        .split('\n')
        .every((l) => / deleted$/.test(l)),
      deleted.stdout,
    );
    // What the samples made goes with them (the Declaration the controller rendered for sample-node too).
    await eventually(async () => assert.deepEqual(await world(client), before), { timeoutMs: 10_000, intervalMs: 100 });
    const still = await client.get('meshes', 'mesh');
    assert.equal(still.metadata.uid, mesh.metadata.uid);
    // The sample Backup's record in the Mesh status goes with it (the schedule is off, no backup is left).
    await eventually(
      async () => {
        const { controlPlaneNode, hubNode, lastVerifiedBackup } = (await client.get('meshes', 'mesh')).status ?? {};
        assert.deepEqual(
          { controlPlaneNode, hubNode, lastVerifiedBackup },
          { controlPlaneNode: 'cp-1', hubNode: 'cp-1', lastVerifiedBackup: undefined },
        );
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
  });

  it("init on a data dir a control plane served first gives the Mesh it created init's status, and then counts as initialised", async (t) => {
    const w = initWorld(t, cli);
    const cp = await runControlPlane(cli, ['--data-dir', w.dataDir, '--listen', '127.0.0.1:0', '--node', 'cp-1']);
    assert.equal(cp.serving, true, cp.output());
    const client = createClient(loadMeshconfig(w.meshconfig));
    const created = await client.get('meshes', 'mesh').finally(() => client.close());
    assert.equal(await cp.stop(), 0);

    const port = await freePort();
    const r = await w.init(['--listen', `127.0.0.1:${port}`]);
    assert.equal(r.code, 0, r.stderr);
    const store = await openStore({ dir: controlPlanePaths(w.dataDir).store });
    try {
      const mesh = store.get('meshes', 'mesh')!;
      assert.equal(mesh.metadata.uid, created.metadata.uid);
      assert.deepEqual(mesh.spec, {});
      // The recovery clock the control plane wrote is kept; init adds the roles.
      const { controlPlaneNode, hubNode } = mesh.status ?? {};
      assert.deepEqual({ controlPlaneNode, hubNode }, { controlPlaneNode: 'cp-1', hubNode: 'cp-1' });
    } finally {
      await store.close();
    }
    const again = await w.init(['--listen', `127.0.0.1:${port}`]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /is already initialised: its store holds Mesh "mesh" \(control-plane node "cp-1"/);
  });
});
