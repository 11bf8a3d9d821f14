// Optimistic concurrency under load: many clients doing read-modify-write with retry on 409.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../harness.ts';

const API = '/apis/meshctl.dev/v1alpha1';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const CLIENTS = 20;
const INCREMENTS = 5;

let srv: TestServer;
before(async () => {
  srv = await startServer();
});
after(() => srv.stop());

function counterOf(obj: { metadata: { annotations?: Record<string, string> } }): number {
  return Number(obj.metadata.annotations?.counter ?? '0');
}

/** Runs `CLIENTS` workers doing `INCREMENTS` increments each with `step`; returns successes and conflicts. */
async function race(step: () => Promise<number>): Promise<{ ok: number; conflicts: number }> {
  let ok = 0;
  let conflicts = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (let i = 0; i < INCREMENTS; i++) {
        for (;;) {
          const code = await step();
          if (code === 200) {
            ok++;
            break;
          }
          assert.equal(code, 409);
          conflicts++;
        }
      }
    }),
  );
  return { ok, conflicts };
}

test('20 clients incrementing with GET+PUT: every success counted once, conflicts happen', async () => {
  await srv.request('POST', `${API}/nodes`, {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name: 'ctr-put', annotations: { counter: '0' } },
  });
  const { ok, conflicts } = await race(async () => {
    const cur = (await srv.request('GET', `${API}/nodes/ctr-put`)).json;
    cur.metadata.annotations.counter = String(counterOf(cur) + 1);
    const r = await srv.request('PUT', `${API}/nodes/ctr-put`, cur);
    if (r.status === 409) assert.equal(r.json.reason, 'Conflict');
    return r.status;
  });
  const final = (await srv.request('GET', `${API}/nodes/ctr-put`)).json;
  assert.equal(ok, CLIENTS * INCREMENTS);
  assert.equal(counterOf(final), ok);
  assert.ok(conflicts > 0, 'some writers lost the race');
  assert.equal(final.metadata.generation, 1, 'annotations are not spec');
});

test('the same with merge patches pinned to the resourceVersion read', async () => {
  await srv.request('POST', `${API}/nodes`, {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name: 'ctr-patch', annotations: { counter: '0' } },
  });
  const { ok, conflicts } = await race(async () => {
    const cur = (await srv.request('GET', `${API}/nodes/ctr-patch`)).json;
    const patch = {
      metadata: { resourceVersion: cur.metadata.resourceVersion, annotations: { counter: String(counterOf(cur) + 1) } },
    };
    return (await srv.request('PATCH', `${API}/nodes/ctr-patch`, patch, MERGE)).status;
  });
  assert.equal(counterOf((await srv.request('GET', `${API}/nodes/ctr-patch`)).json), ok);
  assert.ok(conflicts > 0);
});

test('unpinned merge patches of different fields never lose each other', async () => {
  await srv.request('POST', `${API}/nodes`, {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name: 'ctr-fields' },
  });
  const codes = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      srv
        .request('PATCH', `${API}/nodes/ctr-fields`, { metadata: { labels: { [`k${i}`]: 'v' } } }, MERGE)
        .then((r) => r.status),
    ),
  );
  assert.deepEqual(new Set(codes), new Set([200]));
  assert.equal(Object.keys((await srv.request('GET', `${API}/nodes/ctr-fields`)).json.metadata.labels).length, 40);
});

test('concurrent creates of one name: exactly one wins', async () => {
  const codes = await Promise.all(
    Array.from({ length: 20 }, () =>
      srv
        .request('POST', `${API}/nodes`, {
          apiVersion: 'meshctl.dev/v1alpha1',
          kind: 'Node',
          metadata: { name: 'ctr-once' },
        })
        .then((r) => r.status),
    ),
  );
  assert.equal(codes.filter((c) => c === 201).length, 1);
  assert.equal(codes.filter((c) => c === 409).length, 19);
});
