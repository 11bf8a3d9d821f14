import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../meta/types.ts';
import { ApiError } from '../../meta/api-error.ts';
import { FakeClock } from '../../meta/fake-clock.ts';
import { ListPages, decodeContinue, encodeContinue } from './list-pages.ts';

const objs = (n: number): KubeObject[] =>
  Array.from({ length: n }, (_, i) => ({
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name: `n-${String(i).padStart(3, '0')}` },
  }));

const gone = (e: unknown): boolean => e instanceof ApiError && e.code === 410;

test('a continue token round-trips, and names the last item served', () => {
  assert.deepEqual(decodeContinue(encodeContinue({ rv: '42', start: 'b' })), { rv: '42', start: 'b' });
  const pages = new ListPages({ clock: new FakeClock() });
  const p = pages.page(['a'], { limit: 2, storeRv: '7' }, () => ({ items: objs(5), resourceVersion: '7' }));
  assert.deepEqual(decodeContinue(p.continue!), { rv: '7', start: 'n-001' });
  assert.equal(p.remainingItemCount, 3);
});

test('snapshots are bounded by their items together: the oldest list goes first', () => {
  const pages = new ListPages({ clock: new FakeClock(), maxItems: 10 });
  const first = pages.page(['a'], { limit: 1, storeRv: '1' }, () => ({ items: objs(6), resourceVersion: '1' }));
  pages.page(['b'], { limit: 1, storeRv: '2' }, () => ({ items: objs(6), resourceVersion: '2' }));
  assert.equal(pages.size, 1);
  assert.throws(
    () => pages.page(['a'], { token: first.continue!, storeRv: '2' }, () => ({ items: [], resourceVersion: '2' })),
    gone,
  );
});

test('a token whose snapshot is gone is still served while the store has not moved past its resourceVersion', () => {
  const clock = new FakeClock();
  const pages = new ListPages({ clock, ttlMs: 1000 });
  const list = () => ({ items: objs(4), resourceVersion: '9' });
  const first = pages.page(['a'], { limit: 3, storeRv: '9' }, list);
  clock.advance(1001);
  const rest = pages.page(['a'], { token: first.continue!, storeRv: '9' }, list);
  assert.deepEqual(
    rest.items.map((o) => o.metadata.name),
    ['n-003'],
  );
  assert.equal(rest.continue, undefined);
  assert.equal(pages.size, 0);
});
