import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFieldSelector, requiredName } from '../meta/selectors.ts';
import { StoreEvent } from './store-event.ts';
import { Watcher } from './watcher.ts';
import { WatcherRegistry } from './watcher-registry.ts';

const watcher = (plural: string, fieldSelector = ''): Watcher =>
  new Watcher({
    plural,
    label: [],
    field: parseFieldSelector(fieldSelector),
    cursor: 0,
    onEvent: () => undefined,
    control: { stop: () => undefined, pause: () => undefined, resume: () => undefined, failed: () => undefined },
  });
const event = (plural: string, name: string): StoreEvent =>
  new StoreEvent({
    type: 'MODIFIED',
    plural,
    rv: 1,
    object: { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Declaration', metadata: { name } },
  });

test('a field selector requiring metadata.name names the only object its watch can see', () => {
  assert.equal(requiredName(parseFieldSelector('metadata.name=n1')), 'n1');
  assert.equal(requiredName(parseFieldSelector('spec.site=x,metadata.name==n2')), 'n2');
  assert.equal(requiredName(parseFieldSelector('metadata.name!=n1')), undefined);
  assert.equal(requiredName(parseFieldSelector('spec.site=x')), undefined);
});

test("an event is offered to its kind's unnamed watchers and to those of its name, not to every node's", () => {
  const reg = new WatcherRegistry();
  const perNode = Array.from({ length: 1000 }, (_, i) => watcher('declarations', `metadata.name=n${i}`));
  for (const w of perNode) reg.add(w);
  const admin = watcher('declarations');
  reg.add(admin);
  reg.add(watcher('nodes', 'metadata.name=n5'));
  assert.equal(reg.size, 1002);
  assert.deepEqual(reg.for(event('declarations', 'n5')), [admin, perNode[5]]);
  assert.deepEqual(reg.for(event('declarations', 'elsewhere')), [admin]);
  reg.delete(perNode[5]);
  reg.delete(admin);
  assert.deepEqual(reg.for(event('declarations', 'n5')), []);
  assert.equal(reg.size, 1000);
});
