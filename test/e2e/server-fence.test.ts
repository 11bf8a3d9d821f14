// The issue-9 repro over the API: the control plane is killed between a write's acceptance and its fsync,
// after a reader saw the write (GET and list at its resourceVersion), and the power is cut (the power-loss
// layer, api/store/testdata/power-loss-fs.ts: the write had reached the page cache only). The restarted
// `mesh-control-plane` has lost the write, never issues its resourceVersion again, and answers a watch from
// it with 410; a watch from the last durable resourceVersion misses nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { controlPlanePaths } from '../../api/server/pki/first-start.ts';
import { restoreDurableImage } from '../../api/store/testdata/durable-image.ts';
import type { ClientConfig } from '../../api/client/types.ts';
import { httpRequest, openStream, REPO_ROOT, spawnControlPlane } from '../harness.ts';

const NODES = '/apis/meshctl.dev/v1alpha1/nodes';
const CHILD = join(import.meta.dirname, 'held-sync-server.ts');
const node = (name: string) => ({ apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name } });

function tempDir(t: { after(fn: () => void): void }, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts the child server; `line(word)` waits (generously) for its stdout line starting with `word`. */
function startChild(dataDir: string, image: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dataDir, image], {
    cwd: REPO_ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  let rest = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    const parts = (rest + d).split('\n');
    rest = parts.pop() as string;
    lines.push(...parts);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = async (word: string): Promise<string[]> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const found = lines.find((l) => l.split(' ')[0] === word);
      if (found) return found.split(' ').slice(1);
      assert.ok(child.exitCode === null, `the child exited before "${word}": ${lines.join(' | ')}`);
      assert.ok(Date.now() < deadline, `no "${word}" line from the child: ${lines.join(' | ')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { child, line, exited };
}

test('killed between a write’s acceptance and its fsync, a reader having seen it: after the power cut the restarted control plane answers a watch from that resourceVersion with 410', async (t) => {
  const dataDir = tempDir(t, 'meshctl-fence-');
  const image = tempDir(t, 'meshctl-image-');
  const c = startChild(dataDir, image);
  t.after(() => void c.child.kill('SIGKILL'));
  const [url, token] = await c.line('serving');
  const cfg: ClientConfig = { server: url, token };
  const a = await httpRequest(cfg, 'POST', NODES, node('a'));
  assert.equal(a.status, 201, a.text);
  const durableRv = Number(a.json.metadata.resourceVersion);
  c.child.stdin.write('hold\n');
  await c.line('holding');
  void httpRequest(cfg, 'POST', NODES, node('b')).catch(() => undefined); // accepted, never acknowledged
  await c.line('held');
  const seen = await httpRequest(cfg, 'GET', `${NODES}/b`);
  assert.equal(seen.status, 200, 'a reader sees the write whose fdatasync is in flight');
  const seenRv = seen.json.metadata.resourceVersion as string;
  assert.equal(Number(seenRv), durableRv + 1);
  assert.equal((await httpRequest(cfg, 'GET', NODES)).json.metadata.resourceVersion, seenRv, 'and a list at its rv');
  c.child.kill('SIGKILL');
  await c.exited;
  restoreDurableImage(controlPlanePaths(dataDir).store, image); // the power cut

  const cp = await spawnControlPlane({ dataDir, insecure: true, timeoutMs: 60_000 });
  t.after(() => cp.stop());
  assert.equal((await httpRequest(cp.config, 'GET', `${NODES}/b`)).status, 404, 'the crash lost the write');
  const fromDurable = await openStream(cp.config, `${NODES}?watch=1&resourceVersion=${durableRv}`);
  const next = await httpRequest(cp.config, 'POST', NODES, node('c'));
  assert.equal(next.status, 201, next.text);
  assert.ok(Number(next.json.metadata.resourceVersion) > Number(seenRv), 'its resourceVersion is never reused');
  const gone = await openStream(cp.config, `${NODES}?watch=1&resourceVersion=${seenRv}`);
  try {
    assert.equal(gone.status, 200);
    const e = (await gone.next(30_000)) as { type: string; object: { code: number } };
    assert.equal(e.type, 'ERROR');
    assert.equal(e.object.code, 410, 'a watch from the lost write’s resourceVersion is 410');
    // The controllers of the restarted control plane may change node a too; b must never appear.
    const seenEvents: string[] = [];
    while (!seenEvents.includes('ADDED c')) {
      const e = (await fromDurable.next(30_000)) as { type: string; object: { metadata: { name: string } } };
      seenEvents.push(`${e.type} ${e.object.metadata.name}`);
    }
    assert.ok(!seenEvents.some((e) => e.endsWith(' b')), `the lost write never shows: ${seenEvents.join(', ')}`);
  } finally {
    gone.close();
    fromDurable.close();
  }
});
