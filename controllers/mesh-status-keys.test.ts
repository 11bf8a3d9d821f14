/**
 * A Mesh status write (the recovery clock rewrites outageBudgetSeconds every minute) queues no node in the
 * controllers that read the Mesh's spec — the Declaration, Node and overlay controllers — while a spec change still
 * queues every node in each. Against the real API server and store (in-process, port 0), with the controllers'
 * real informers and event handlers. The keys their Mesh handlers queue are told apart from the rest (the nodes'
 * own changes keep queuing keys meanwhile) by two more handlers on the Mesh informer, one registered before the
 * controllers' and one after: the informer calls its handlers in that order, synchronously, per event.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../api/meta/logger.ts';
import { eventually } from '../test/eventually.ts';
import { serverSuite } from '../test/server-suite.ts';
import { createDeclarationController } from './declaration-controller.ts';
import { createNodeController } from './node-controller.ts';
import { createOverlayController } from './overlay-controller.ts';
import { createManager } from './runtime/manager.ts';
import type { Controller } from './runtime/controller.ts';

const suite = serverSuite();
const NODES = ['m1', 'm2', 'm3'];

/** Records the keys `c`'s event handlers add to its queue while `during()` holds. */
function recordKeys(c: Controller, during: () => boolean): string[] {
  const keys: string[] = [];
  const add = c.queue.add.bind(c.queue);
  c.queue.add = (key: string) => {
    if (during()) keys.push(key);
    add(key);
  };
  return keys;
}

test("a Mesh status write queues no node; a change of the Mesh's spec queues every node", async (t) => {
  const { client } = suite;
  const mesh = { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Mesh', metadata: { name: 'mesh' }, spec: {} } as const;
  await client.create('meshes', mesh);
  for (const name of NODES)
    await client.create('nodes', { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name }, spec: {} });
  const manager = createManager({ client, logger: silentLogger, backoff: { baseMs: 20, maxMs: 200 } });
  const meshes = manager.informerFor('meshes');
  let inMeshEvent = false;
  meshes.addEventHandler(() => void (inMeshEvent = true));
  const controllers = [
    createDeclarationController({ manager }),
    createNodeController({ manager }),
    createOverlayController({ manager }),
  ];
  meshes.addEventHandler(() => void (inMeshEvent = false));
  const keys = controllers.map((c) => {
    manager.add(c);
    return recordKeys(c, () => inMeshEvent);
  });
  assert.equal(await manager.start(), true);
  t.after(() => manager.stop());
  await eventually(async () => assert.equal(manager.informerFor('nodes').list().length, NODES.length));

  // What the recovery clock writes: status only.
  const stored = await client.get('meshes', 'mesh');
  const before = keys.map((k) => k.length);
  await client.updateStatus('meshes', { ...stored, status: { ...stored.status, outageBudgetSeconds: 12345 } });
  await eventually(async () => assert.equal(meshes.get('mesh')?.status?.outageBudgetSeconds, 12345));
  // The informer ran every handler before its cache showed the new Mesh.
  assert.equal(inMeshEvent, false);
  assert.deepEqual(
    keys.map((k, i) => k.slice(before[i])),
    controllers.map(() => []),
    'a status-only Mesh write queued nodes',
  );

  // A spec change (the overlay's port: read by the Declaration controller's rendering) queues every node in each.
  const marks = keys.map((k) => k.length);
  await client.patch('meshes', 'mesh', { spec: { overlay: { port: 51999 } } });
  await eventually(async () => assert.equal(meshes.get('mesh')?.spec?.overlay?.port, 51999));
  for (const [i, c] of controllers.entries())
    assert.deepEqual([...new Set(keys[i].slice(marks[i]))].sort(), NODES, `${c.name}: every node after a spec change`);
});
