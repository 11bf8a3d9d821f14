// @kubernetes/client-node (1.4, at runtime here only: the project uses its types) against the real control-plane
// process over HTTPS, loading the admin meshconfig as its kubeconfig: CustomObjectsApi CRUD with its default
// patch content type (application/json-patch+json), server-side apply through KubernetesObjectApi, and an
// informer that resumes after the control plane restarts. Its runtime loads and runs on Node 20.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  makeInformer,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { spawnControlPlane, type ControlPlaneProcess } from '../harness.ts';

const GV = { group: 'meshctl.dev', version: 'v1alpha1' };
type NodeObj = KubernetesObject & { spec?: { site?: string } };

let cp: ControlPlaneProcess;
let dataDir: string;

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(cp.meshconfigPath);
  return kc;
}

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'meshctl-client-node-'));
  cp = await spawnControlPlane({ dataDir });
});
after(async () => {
  await cp.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A replace as a client does it: read, change, write; read again when the control plane's controllers got in between (409). */
async function replaceSite(api: CustomObjectsApi, name: string, site: string): Promise<NodeObj> {
  for (let attempt = 1; ; attempt++) {
    const current = (await api.getClusterCustomObject({ ...GV, plural: 'nodes', name })) as NodeObj;
    try {
      const body = { ...current, spec: { ...current.spec, site } };
      return (await api.replaceClusterCustomObject({ ...GV, plural: 'nodes', name, body })) as NodeObj;
    } catch (e) {
      if ((e as { code?: number }).code !== 409 || attempt >= 10) throw e;
    }
  }
}

test('CustomObjectsApi: create, get, list, patch (its default JSON patch), replace, delete', async () => {
  const api = kubeConfig().makeApiClient(CustomObjectsApi);
  const body = { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name: 'cn-a' }, spec: { site: 'home' } };
  const created = (await api.createClusterCustomObject({ ...GV, plural: 'nodes', body })) as NodeObj;
  assert.ok(created.metadata?.uid, 'created with a uid');
  const got = (await api.getClusterCustomObject({ ...GV, plural: 'nodes', name: 'cn-a' })) as NodeObj;
  assert.equal(got.spec?.site, 'home');
  const list = (await api.listClusterCustomObject({ ...GV, plural: 'nodes' })) as KubernetesListObject<NodeObj>;
  assert.ok(
    list.items.some((i) => i.metadata?.name === 'cn-a'),
    'listed',
  );
  const patch = [{ op: 'replace', path: '/spec/site', value: 'lab' }];
  const patched = (await api.patchClusterCustomObject({
    ...GV,
    plural: 'nodes',
    name: 'cn-a',
    body: patch,
  })) as NodeObj;
  assert.equal(patched.spec?.site, 'lab');
  assert.equal((await replaceSite(api, 'cn-a', 'office')).spec?.site, 'office');
  await api.deleteClusterCustomObject({ ...GV, plural: 'nodes', name: 'cn-a' });
  await assert.rejects(api.getClusterCustomObject({ ...GV, plural: 'nodes', name: 'cn-a' }), /404|not found/i);
});

test('KubernetesObjectApi: server-side apply creates, updates, and a second manager gets a 409 conflict', async () => {
  const api = KubernetesObjectApi.makeApiClient(kubeConfig());
  const spec = (site: string): NodeObj => ({
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name: 'cn-s' },
    spec: { site },
  });
  const ssa = PatchStrategy.ServerSideApply;
  const first = await api.patch(spec('home'), undefined, undefined, 'automation', false, ssa);
  assert.equal(first.metadata?.managedFields?.[0]?.manager, 'automation');
  const second = await api.patch(spec('lab'), undefined, undefined, 'automation', false, ssa);
  assert.equal(second.spec?.site, 'lab');
  await assert.rejects(api.patch(spec('other'), undefined, undefined, 'someone-else', false, ssa), (e: unknown) => {
    const text = String((e as { body?: unknown }).body ?? e);
    assert.match(text, /Apply failed with 1 conflict: conflict with \\?"automation\\?": \.spec\.site/);
    return true;
  });
  const forced = await api.patch(spec('other'), undefined, undefined, 'someone-else', true, ssa);
  assert.equal(forced.spec?.site, 'other');
});

async function until(what: string, cond: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('an informer sees changes, and resumes after the control plane restarts', async (t) => {
  const api = kubeConfig().makeApiClient(CustomObjectsApi);
  const list = (): Promise<KubernetesListObject<NodeObj>> =>
    api.listClusterCustomObject({ ...GV, plural: 'nodes' }) as Promise<KubernetesListObject<NodeObj>>;
  const informer = makeInformer<NodeObj>(kubeConfig(), '/apis/meshctl.dev/v1alpha1/nodes', list);
  const seen: string[] = [];
  informer.on('add', (o) => seen.push(`add ${o.metadata?.name} ${o.spec?.site}`));
  informer.on('update', (o) => seen.push(`update ${o.metadata?.name} ${o.spec?.site}`));
  let errors = 0;
  let stopped = false;
  informer.on('error', () => {
    errors++;
    setTimeout(() => {
      if (!stopped) void informer.start().catch(() => undefined);
    }, 500);
  });
  t.after(async () => {
    stopped = true;
    await informer.stop();
  });
  await informer.start();
  const body = { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name: 'cn-i' }, spec: { site: 'home' } };
  await api.createClusterCustomObject({ ...GV, plural: 'nodes', body });
  await until('the informer to see cn-i added', () => seen.includes('add cn-i home'));

  const port = new URL(cp.url).port;
  await cp.stop();
  cp = await spawnControlPlane({ dataDir, listen: `127.0.0.1:${port}` });
  const again = kubeConfig().makeApiClient(CustomObjectsApi);
  const patch = [{ op: 'replace', path: '/spec/site', value: 'after-restart' }];
  await again.patchClusterCustomObject({ ...GV, plural: 'nodes', name: 'cn-i', body: patch });
  await until(`the informer to see the change after the restart (errors ${errors}; seen ${seen.join('; ')})`, () =>
    seen.includes('update cn-i after-restart'),
  );
  assert.equal(informer.get('cn-i')?.spec?.site, 'after-restart');
});
