// List pagination (`limit`/`continue`) against the real server over HTTPS: pages in name order at the first page's
// resourceVersion, 410 Expired once a list's snapshot is gone, 400 for bad input, and kubectl's chunked lists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../api/meta/fake-clock.ts';
import { CONTINUE_EXPIRED_MESSAGE, DEFAULT_PAGE_TTL_MS } from '../../api/server/resources/list-pages.ts';
import { serverSuite } from '../server-suite.ts';
import { hasKubectl, runKubectl } from './kubectl-helpers.ts';

const clock = new FakeClock();
const MAX_PAGED = 3;
const s = serverSuite({ listPages: { clock, maxEntries: MAX_PAGED } });
const NODES = '/apis/meshctl.dev/v1alpha1/nodes';
const TABLE = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
const NAMES = ['pg-05', 'pg-02', 'pg-07', 'pg-01', 'pg-04', 'pg-06', 'pg-03'];

async function createNode(name: string): Promise<void> {
  const tier = Number(name.slice(-2)) % 2 ? 'odd' : 'even';
  const body = { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name, labels: { tier } }, spec: {} };
  const r = await s.server.request('POST', NODES, { ...body, spec: { site: 'home' } });
  assert.equal(r.status, 201, r.text);
}

let created = false;
async function ensureNodes(): Promise<void> {
  if (created) return;
  for (const n of NAMES) await createNode(n);
  created = true;
}

interface Walked {
  pages: string[][];
  rvs: string[];
  remaining: (number | undefined)[];
}

/** Lists `path` page by page with `limit`, following `continue` to the end. */
async function walk(query: string, limit: number, headers: Record<string, string> = {}): Promise<Walked> {
  const out: Walked = { pages: [], rvs: [], remaining: [] };
  let cont = '';
  for (let i = 0; i < 100; i++) {
    const q = `${query}${query ? '&' : ''}limit=${limit}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`;
    const r = await s.server.request('GET', `${NODES}?${q}`, undefined, headers);
    assert.equal(r.status, 200, r.text);
    const rows = (r.json.items ?? r.json.rows) as {
      metadata?: { name: string };
      object?: { metadata: { name: string } };
    }[];
    out.pages.push(rows.map((o) => (o.metadata ?? o.object!.metadata).name));
    out.rvs.push(r.json.metadata.resourceVersion);
    out.remaining.push(r.json.metadata.remainingItemCount);
    cont = r.json.metadata.continue ?? '';
    if (!cont) return out;
  }
  throw new Error('more than 100 pages');
}

test('pages cover every object once in name order, with and without a label selector, as JSON and Table', async () => {
  await ensureNodes();
  const sorted = [...NAMES].sort();
  const all = await walk('', 3);
  assert.deepEqual(all.pages, [sorted.slice(0, 3), sorted.slice(3, 6), sorted.slice(6)]);
  assert.deepEqual(all.remaining, [4, 1, undefined]);
  assert.equal(new Set(all.rvs).size, 1, `one resourceVersion: ${all.rvs.join(',')}`);
  const odd = await walk('labelSelector=tier%3Dodd', 1);
  assert.deepEqual(odd.pages, [['pg-01'], ['pg-03'], ['pg-05'], ['pg-07']]);
  assert.deepEqual(odd.remaining, [3, 2, 1, undefined]);
  const table = await walk('', 4, TABLE);
  assert.deepEqual(table.pages, [sorted.slice(0, 4), sorted.slice(4)]);
  const whole = await s.server.request('GET', `${NODES}?limit=100`);
  assert.equal(whole.json.metadata.continue, undefined, 'no continue when everything fits');
});

test('a write between pages does not show in later pages: every page is at the first page resourceVersion', async () => {
  await ensureNodes();
  const first = await s.server.request('GET', `${NODES}?limit=2`);
  assert.deepEqual(
    first.json.items.map((o: { metadata: { name: string } }) => o.metadata.name),
    ['pg-01', 'pg-02'],
  );
  await createNode('pg-035');
  assert.equal((await s.server.request('DELETE', `${NODES}/pg-06`)).status, 200);
  const rest = await s.server.request('GET', `${NODES}?continue=${encodeURIComponent(first.json.metadata.continue)}`);
  assert.equal(rest.status, 200, rest.text);
  assert.equal(rest.json.metadata.resourceVersion, first.json.metadata.resourceVersion);
  assert.deepEqual(
    rest.json.items.map((o: { metadata: { name: string } }) => o.metadata.name),
    ['pg-03', 'pg-04', 'pg-05', 'pg-06', 'pg-07'],
  );
  const now = await s.server.request('GET', NODES);
  assert.ok(
    now.json.items.some((o: { metadata: { name: string } }) => o.metadata.name === 'pg-035'),
    'a new list sees the write',
  );
  await createNode('pg-06');
  assert.equal((await s.server.request('DELETE', `${NODES}/pg-035`)).status, 200);
});

async function expectExpired(token: string): Promise<void> {
  await createNode(`pg-x${Math.random().toString(36).slice(2, 8)}`); // the store moves past the token's rv
  const r = await s.server.request('GET', `${NODES}?limit=2&continue=${encodeURIComponent(token)}`);
  assert.equal(r.status, 410, r.text);
  assert.equal(r.json.reason, 'Expired');
  assert.equal(r.json.message, CONTINUE_EXPIRED_MESSAGE);
}

test('a continue token whose snapshot outlived its TTL is 410 Expired', async () => {
  await ensureNodes();
  const first = await s.server.request('GET', `${NODES}?limit=2`);
  clock.advance(DEFAULT_PAGE_TTL_MS + 1);
  await expectExpired(first.json.metadata.continue);
});

test('a continue token whose snapshot was evicted by newer paged lists is 410 Expired', async () => {
  await ensureNodes();
  const first = await s.server.request('GET', `${NODES}?limit=2`);
  for (let i = 0; i <= MAX_PAGED; i++) {
    const other = await s.server.request('GET', `${NODES}?limit=1&labelSelector=n${i}!%3Dx`);
    assert.ok(other.json.metadata.continue, `list ${i} has more pages`);
  }
  await expectExpired(first.json.metadata.continue);
});

test('a malformed continue token, a bad limit, or continue with resourceVersion is 400', async () => {
  const bad = [
    'continue=not-base64!',
    `continue=${Buffer.from('{"rv":"x","start":"a"}').toString('base64url')}`,
    `continue=${Buffer.from('[1]').toString('base64url')}`,
    'limit=0',
    'limit=-1',
    'limit=abc',
    'limit=1.5',
    `continue=${Buffer.from('{"rv":"1","start":"a"}').toString('base64url')}&resourceVersion=1`,
  ];
  for (const q of bad) {
    const r = await s.server.request('GET', `${NODES}?${q}`);
    assert.equal(r.status, 400, `${q}: ${r.text}`);
    assert.equal(r.json.kind, 'Status', q);
    assert.equal(r.json.reason, 'BadRequest', q);
  }
});

test('kubectl get nodes --chunk-size=2 lists every node in pages', { skip: !hasKubectl && 'no kubectl' }, async () => {
  await ensureNodes();
  const work = mkdtempSync(join(tmpdir(), 'meshctl-kubectl-pages-'));
  try {
    const r = await runKubectl(s.server, work, ['get', 'nodes', '--chunk-size=2', '-o', 'name', '-v=6']);
    assert.equal(r.code, 0, r.stderr);
    const listed = r.stdout.trim().split('\n');
    const want = (await s.server.request('GET', NODES)).json.items.map(
      (o: { metadata: { name: string } }) => `node.meshctl.dev/${o.metadata.name}`,
    );
    assert.deepEqual(listed, want);
    assert.ok(want.length > 4, `several pages of nodes: ${want.length}`);
    const requests = r.stderr.split('\n').filter((l) => /GET \S+\/nodes\?/.test(l));
    assert.ok(requests.length >= Math.ceil(want.length / 2), `kubectl paged:\n${requests.join('\n')}`);
    assert.ok(
      requests.slice(1).every((l) => /continue=/.test(l)),
      `later requests continue:\n${requests.join('\n')}`,
    );
    const t = await runKubectl(s.server, work, ['get', 'nodes', '--chunk-size=2']);
    assert.equal(t.code, 0, t.stderr);
    for (const n of NAMES) assert.match(t.stdout, new RegExp(`^${n}\\s`, 'm'));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
