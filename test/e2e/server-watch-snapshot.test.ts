// Watches from resourceVersion 0 over the real server and store share one snapshot of the initial ADDED
// events (api/store/watch-snapshots.ts), then go on from its resourceVersion with no event lost.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openStream, startServer, type TestServer } from '../harness.ts';

const API = '/apis/meshctl.dev/v1alpha1';
type Event = { type: string; object: { metadata: { name?: string; resourceVersion?: string } } };

function node(name: string): Record<string, unknown> {
  return { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name }, spec: { site: 'home' } };
}

let srv: TestServer;
before(async () => {
  srv = await startServer({ insecure: true, watchHeartbeatMs: 100 });
});
after(() => srv.stop());

test('unfiltered watches from 0 share one snapshot, then follow changes; a bookmark carries its resourceVersion', async () => {
  const names = Array.from({ length: 40 }, (_, i) => `snap-${String(i).padStart(2, '0')}`);
  for (const n of names) assert.equal((await srv.request('POST', `${API}/nodes`, node(n))).status, 201);
  const rv = srv.store.resourceVersion();
  const before = srv.store.stats().watchSnapshots;
  const paths = [`${API}/nodes?watch=1&resourceVersion=0&allowWatchBookmarks=true`, `${API}/nodes?watch=true`];
  const watches = await Promise.all(paths.map((p) => openStream(srv.config, p)));
  try {
    for (const w of watches) {
      assert.equal(w.status, 200);
      const initial: Event[] = [];
      for (let i = 0; i < names.length; i++) initial.push((await w.next()) as Event);
      assert.deepEqual(
        initial.map((e) => `${e.type} ${e.object.metadata.name}`),
        names.map((n) => `ADDED ${n}`),
      );
    }
    const after = srv.store.stats().watchSnapshots;
    assert.equal(after.built - before.built, 1, 'one snapshot encoded for both watches');
    assert.equal(after.shared - before.shared, 1, 'the second watch was served the first one');
    const bookmark = (await watches[0].next()) as Event;
    assert.equal(bookmark.type, 'BOOKMARK');
    assert.equal(bookmark.object.metadata.resourceVersion, rv, 'the snapshot is the state at the store rv');
    assert.equal((await srv.request('DELETE', `${API}/nodes/snap-07`)).status, 200);
    for (const w of watches) {
      let e = (await w.next()) as Event;
      while (e.type === 'BOOKMARK') e = (await w.next()) as Event;
      assert.equal(`${e.type} ${e.object.metadata.name}`, 'DELETED snap-07');
    }
  } finally {
    for (const w of watches) w.close();
  }
});
