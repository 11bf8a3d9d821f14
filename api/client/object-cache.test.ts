import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../meta/types.ts';
import { ObjectCache, type CacheChange } from './object-cache.ts';

function obj(name: string, rv: string): KubeObject {
  return { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name, resourceVersion: rv } };
}
const brief = (cs: CacheChange[]): string[] =>
  cs.map((c) => `${c.type} ${c.obj.metadata.name}${c.old ? ` (was ${c.old.metadata.resourceVersion})` : ''}`);

test('events are applied by what is cached: ADDED for new names, MODIFIED with the old object, DELETED', () => {
  const cache = new ObjectCache();
  const changes = [
    cache.apply({ type: 'ADDED', object: obj('a', '1') }),
    cache.apply({ type: 'MODIFIED', object: obj('a', '2') }),
    cache.apply({ type: 'MODIFIED', object: obj('b', '3') }),
    cache.apply({ type: 'ADDED', object: obj('b', '4') }),
    cache.apply({ type: 'DELETED', object: obj('a', '6') }),
  ];
  assert.deepEqual(brief(changes.filter((c) => c !== undefined)), [
    'ADDED a',
    'MODIFIED a (was 1)',
    'ADDED b',
    'MODIFIED b (was 3)',
    'DELETED a (was 2)',
  ]);
  assert.deepEqual(
    cache.list().map((o) => o.metadata.resourceVersion),
    ['4'],
  );
});

test('replacing with a fresh list reports exactly the differences', () => {
  const cache = new ObjectCache();
  cache.replace([obj('a', '1'), obj('b', '2'), obj('c', '3')]);
  const changes = cache.replace([obj('d', '7'), obj('b', '2'), obj('c', '6')]);
  assert.deepEqual(brief(changes).sort(), ['ADDED d', 'DELETED a (was 1)', 'MODIFIED c (was 3)']);
  assert.deepEqual(
    cache.list().map((o) => o.metadata.name),
    ['b', 'c', 'd'],
  );
  assert.equal(cache.get('c')?.metadata.resourceVersion, '6');
  assert.deepEqual(
    cache.replace([]).map((c) => c.type),
    ['DELETED', 'DELETED', 'DELETED'],
  );
  assert.equal(cache.size, 0);
});

test('an index follows every event and relist: byIndex finds objects by value without a scan', () => {
  const cache = new ObjectCache();
  const site = (name: string, rv: string, s?: string): KubeObject => ({
    ...obj(name, rv),
    metadata: { name, resourceVersion: rv, ...(s ? { labels: { site: s } } : {}) },
  });
  cache.apply({ type: 'ADDED', object: site('a', '1', 'x') });
  cache.addIndex('site', (o) => (o.metadata.labels?.site ? [o.metadata.labels.site] : []));
  cache.apply({ type: 'ADDED', object: site('c', '2', 'x') });
  cache.apply({ type: 'ADDED', object: site('b', '3', 'y') });
  const names = (v: string): string[] => cache.byIndex('site', v).map((o) => o.metadata.name ?? '');
  assert.deepEqual(names('x'), ['a', 'c'], 'indexed before and after addIndex, sorted by name');
  cache.apply({ type: 'MODIFIED', object: site('a', '4', 'y') });
  assert.deepEqual([names('x'), names('y')], [['c'], ['a', 'b']], 'a modified object moves to its new value');
  cache.apply({ type: 'MODIFIED', object: site('a', '4a', 'y') });
  assert.deepEqual([names('x'), names('y')], [['c'], ['a', 'b']], 'a change that keeps the value keeps the entry');
  assert.equal(cache.byIndex('site', 'y')[0]?.metadata.resourceVersion, '4a', 'which gives the newest object');
  cache.apply({ type: 'DELETED', object: site('b', '5', 'y') });
  cache.apply({ type: 'MODIFIED', object: site('c', '6') });
  assert.deepEqual([names('x'), names('y')], [[], ['a']], 'deleted, or without a value: in no entry');
  cache.replace([site('d', '7', 'x'), site('a', '4', 'y')]);
  assert.deepEqual([names('x'), names('y')], [['d'], ['a']], 'a relist re-indexes');
  assert.throws(() => cache.byIndex('nope', 'x'), /no index "nope"/);
});

test('list() is sorted once per change and hands out a copy each time', () => {
  const cache = new ObjectCache();
  cache.replace([obj('b', '1'), obj('a', '2')]);
  const first = cache.list();
  first.pop();
  assert.deepEqual(
    cache.list().map((o) => o.metadata.name),
    ['a', 'b'],
    "a caller changing the array does not change the cache's",
  );
  cache.apply({ type: 'ADDED', object: obj('0', '3') });
  assert.deepEqual(
    cache.list().map((o) => o.metadata.name),
    ['0', 'a', 'b'],
  );
});
