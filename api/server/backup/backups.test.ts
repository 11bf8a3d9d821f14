import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../../../test/harness.ts';
import { decodeArchive } from '../../backup/archive.ts';
import { verifyArchive } from '../../backup/verify.ts';
import type { KubeObject } from '../../meta/types.ts';

const BASE = '/apis/meshctl.dev/v1alpha1';

/** The objects of the store member of an archive, by name. */
function snapshotObjects(archive: Buffer): Map<string, KubeObject> {
  const store = decodeArchive(archive).find((m) => m.name === 'store/snapshot.jsonl');
  const lines = store!.data.toString('utf8').trim().split('\n').slice(1, -1);
  const out = new Map<string, KubeObject>();
  for (const l of lines) {
    const rec = JSON.parse(l) as { plural: string; obj: KubeObject };
    out.set(`${rec.plural}/${rec.obj.metadata.name}`, rec.obj);
  }
  return out;
}

/** One writer's acknowledged writes: node `w<i>`, label `n` = the write's number, at the acknowledged rv. */
interface Ack {
  rv: number;
  n: number;
}

test('a backup taken while 16 writers hammer the API is consistent: one resourceVersion, every write before it in it', async (t) => {
  const srv = await startServer({ backups: true });
  t.after(() => srv.stop());
  const acks: Ack[][] = Array.from({ length: 16 }, () => []);
  let stop = false;
  const writer = async (i: number): Promise<void> => {
    const name = `w${i}`;
    const node = (n: number): KubeObject => ({
      apiVersion: 'meshctl.dev/v1alpha1',
      kind: 'Node',
      metadata: { name, labels: { n: String(n) } },
      spec: {},
    });
    let r = await srv.request('POST', `${BASE}/nodes`, node(0));
    assert.equal(r.status, 201, r.text);
    acks[i].push({ rv: Number(r.json.metadata.resourceVersion), n: 0 });
    for (let n = 1; !stop; n++) {
      r = await srv.request('PUT', `${BASE}/nodes/${name}`, node(n));
      assert.equal(r.status, 200, r.text);
      acks[i].push({ rv: Number(r.json.metadata.resourceVersion), n });
    }
  };
  const writers = acks.map((_, i) => writer(i));
  while (acks.some((a) => a.length < 5)) await new Promise((r) => setTimeout(r, 20));
  const ackedBefore = acks.map((a) => a.at(-1)!);
  const created = await srv.request('POST', `${BASE}/backups`, { metadata: { name: 'under-load' } });
  assert.equal(created.status, 201, created.text);
  while (acks.some((a) => a.at(-1)!.n < ackedBefore[acks.indexOf(a)].n + 5))
    await new Promise((r) => setTimeout(r, 20));
  stop = true;
  await Promise.all(writers);
  const pulled = await pull(srv, 'under-load');
  assert.equal(pulled.status, 200);
  const archive = pulled.body;
  assert.equal(createHash('sha256').update(archive).digest('hex'), pulled.sha256);
  const { manifest } = await verifyArchive(archive);
  const R = Number(manifest.resourceVersion);
  const objects = snapshotObjects(archive);
  for (const [i, a] of acks.entries()) {
    const obj = objects.get(`nodes/w${i}`);
    const want = a.filter((x) => x.rv <= R).at(-1);
    assert.ok(want, `writer ${i} wrote before the cut`);
    assert.ok(want.n >= ackedBefore[i].n, `writer ${i}: the write acknowledged before the backup request is in it`);
    assert.equal(
      obj?.metadata.labels?.n,
      String(want.n),
      `writer ${i}: its last write at or below rv ${R}, no later one`,
    );
    assert.equal(obj?.metadata.resourceVersion, String(want.rv), `writer ${i}: at that write's resourceVersion`);
  }
  for (const obj of objects.values()) assert.ok(Number(obj.metadata.resourceVersion) <= R, 'nothing after the cut');
  assert.equal(created.json.status.storeResourceVersion, String(R));
  assert.equal(created.json.status.verified, true);
});

/** GET the archive of backup `name` as bytes (httpRequest decodes bodies as text). */
function pull(
  srv: { url: string; config: { token?: string; caData?: string } },
  name: string,
): Promise<{ status: number; sha256: unknown; body: Buffer }> {
  const u = new URL(`${BASE}/backups/${name}/archive`, srv.url);
  const headers = { authorization: `Bearer ${srv.config.token}` };
  return new Promise((resolve, reject) => {
    const req = httpsRequest(u, { headers, ca: srv.config.caData }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, sha256: res.headers['x-meshctl-sha256'], body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

test('backups are admin-only; an archive that is gone is a 404 naming its file; --to writes elsewhere', async (t) => {
  const srv = await startServer({ backups: true, tokens: { 'tok-a': { kind: 'node', name: 'a' } } });
  t.after(() => srv.stop());
  const node = { authorization: 'Bearer tok-a' };
  const refused = await srv.request('POST', `${BASE}/backups`, {}, node);
  assert.equal(refused.status, 403, refused.text);
  assert.match(refused.json.message, /admin only/);
  const to = mkdtempSync(join(tmpdir(), 'meshctl-backup-to-'));
  t.after(() => rmSync(to, { recursive: true, force: true }));
  const made = await srv.request('POST', `${BASE}/backups?to=${encodeURIComponent(to)}`, {
    metadata: { name: 'elsewhere' },
    spec: { description: 'before the upgrade' },
  });
  assert.equal(made.status, 201, made.text);
  assert.equal(made.json.status.file, join(to, 'elsewhere.meshbackup'));
  assert.equal(made.json.spec.description, 'before the upgrade');
  const asNode = await srv.request('GET', `${BASE}/backups/elsewhere/archive`, undefined, node);
  assert.equal(asNode.status, 403);
  const dry = await srv.request('POST', `${BASE}/backups?dryRun=All`, {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Backup',
    metadata: { name: 'dry' },
  });
  assert.equal(dry.status, 201, dry.text);
  assert.equal(srv.store.get('backups', 'dry'), undefined, 'a dry run takes no backup');
  const again = await srv.request('POST', `${BASE}/backups`, { metadata: { name: 'elsewhere' } });
  assert.equal(again.status, 409, again.text);
  rmSync(made.json.status.file);
  const gone = await srv.request('GET', `${BASE}/backups/elsewhere/archive`);
  assert.equal(gone.status, 404);
  assert.match(gone.json.message, /gone from .*elsewhere\.meshbackup/);
});
