// The informer and a controller against the real API server and store (test/harness.ts): initial list and
// sync, live events, surviving a server restart on the same data dir, relist after 410, and reconcile retries.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../../api/client/http-client.ts';
import type { KubeObject } from '../../api/meta/types.ts';
import { startServer, type TestServer } from '../../test/harness.ts';
import { createController, type Reconciler } from './controller.ts';
import { FakeClock } from '../../api/meta/fake-clock.ts';
import { createInformer, type Informer, type InformerEventType } from '../../api/client/informer.ts';
import type { LogFields, Logger } from '../../api/meta/logger.ts';
import { createManager } from './manager.ts';
import { WorkQueue } from '../../api/client/work-queue.ts';

const API = '/apis/meshctl.dev/v1alpha1';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

function node(name: string, site = 'home'): Record<string, unknown> {
  return { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name }, spec: { site } };
}

async function until(what: string, cond: () => boolean, ms = 5000, detail?: () => unknown): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end)
      throw new Error(`timed out waiting for: ${what}${detail ? ` (${JSON.stringify(detail())})` : ''}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function must(
  srv: TestServer,
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<KubeObject> {
  const r = await srv.request(method, API + path, body, headers);
  assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
  return r.json as KubeObject;
}

function memoryLogger(): Logger & { lines: Array<{ msg: string; fields?: LogFields }> } {
  const lines: Array<{ msg: string; fields?: LogFields }> = [];
  return {
    lines,
    info: (msg, fields) => {
      lines.push({ msg, fields });
    },
    error: (msg, fields) => {
      lines.push({ msg, fields });
    },
  };
}

/** Records what an informer reported, as `TYPE name`. */
function recorder(): { events: string[]; onEvent: (t: InformerEventType, o: KubeObject) => void } {
  const events: string[] = [];
  return {
    events,
    onEvent: (t, o) => {
      events.push(`${t} ${o.metadata.name}`);
    },
  };
}

const names = (inf: Informer): string[] => inf.list().map((o) => o.metadata.name as string);

/**
 * A TCP relay on a fixed port in front of whichever server is current: the harness restarts a server on a
 * new port, and the relay keeps the informer's URL stable across the restart. With no target it drops
 * every connection (the server is unreachable).
 */
async function startRelay(): Promise<{
  port: number;
  setTarget(port: number | undefined): void;
  close(): Promise<void>;
}> {
  let target: number | undefined;
  const sockets = new Set<Socket>();
  const track = (s: Socket): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const server = createServer((down) => {
    track(down);
    if (target === undefined) return void down.destroy();
    const up = connect(target, '127.0.0.1');
    track(up);
    down.pipe(up).on('close', () => down.destroy());
    up.pipe(down).on('close', () => up.destroy());
    down.on('close', () => up.destroy());
    up.on('close', () => down.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const setTarget = (p: number | undefined): void => {
    target = p;
    for (const s of [...sockets]) s.destroy();
  };
  return {
    port,
    setTarget,
    close: () => {
      setTarget(undefined);
      return new Promise((r) => server.close(() => r()));
    },
  };
}

const portOf = (srv: TestServer): number => Number(new URL(srv.url).port);

test('initial list fills the cache, waitForSync resolves, then creates, updates and deletes arrive', async () => {
  const srv = await startServer({ watchHeartbeatMs: 50 });
  cleanups.push(() => srv.stop());
  await must(srv, 'POST', '/nodes', node('b'));
  await must(srv, 'POST', '/nodes', node('a'));
  const client = createClient(srv.config);
  cleanups.push(() => client.close());
  const rec = recorder();
  const inf = createInformer({ client, plural: 'nodes', onEvent: rec.onEvent, logger: memoryLogger() });
  assert.equal(inf.hasSynced(), false);
  inf.start();
  assert.equal(await inf.waitForSync(), true);
  assert.equal(inf.hasSynced(), true);
  assert.deepEqual(names(inf), ['a', 'b']);
  assert.deepEqual(rec.events.sort(), ['ADDED a', 'ADDED b']);

  const created = await must(srv, 'POST', '/nodes', node('c'));
  await until('c cached', () => inf.get('c') !== undefined);
  await must(srv, 'PATCH', '/nodes/c', { spec: { site: 'away' } }, MERGE);
  await until('c updated', () => (inf.get('c')?.spec as { site?: string }).site === 'away');
  await must(srv, 'DELETE', '/nodes/a');
  await until('a gone', () => inf.get('a') === undefined);
  assert.deepEqual(rec.events.slice(2), ['ADDED c', 'MODIFIED c', 'DELETED a']);
  assert.ok(Number(inf.lastResourceVersion()) > Number(created.metadata.resourceVersion));

  await new Promise((r) => setTimeout(r, 200)); // a few heartbeats and bookmarks change nothing
  assert.deepEqual(rec.events.length, 5);
  assert.deepEqual(names(inf), ['b', 'c']);

  const late: string[] = [];
  inf.addEventHandler((t, o) => late.push(`${t} ${o.metadata.name}`));
  assert.deepEqual(late, ['ADDED b', 'ADDED c'], 'a handler added after sync is told the cache');
  await inf.stop();
  assert.equal(await inf.waitForSync(), true);
});

test('the informer backs off while the server is down, resumes after a restart, and relists after a 410', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meshctl-informer-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const relay = await startRelay();
  cleanups.push(() => relay.close());
  let srv = await startServer({ dataDir });
  cleanups.push(() => srv.stop());
  relay.setTarget(portOf(srv));
  for (const n of ['a', 'b', 'c']) await must(srv, 'POST', '/nodes', node(n));

  const clock = new FakeClock();
  const logger = memoryLogger();
  const rec = recorder();
  const client = createClient({ ...srv.config, server: `https://127.0.0.1:${relay.port}` });
  cleanups.push(() => client.close());
  const inf = createInformer({
    client,
    plural: 'nodes',
    clock,
    logger,
    onEvent: rec.onEvent,
    backoff: { baseMs: 100, maxMs: 1000 },
  });
  cleanups.push(() => inf.stop());
  inf.start();
  assert.equal(await inf.waitForSync(), true);
  assert.deepEqual(names(inf), ['a', 'b', 'c']);

  // Down: the watch ends, reconnecting fails, and each retry waits twice as long on the clock.
  const retries = (): Array<{ msg: string; fields?: LogFields }> =>
    logger.lines.filter((l) => l.fields?.retryInMs !== undefined);
  const restart = async (store?: { eventLogCapacity: number }): Promise<void> => {
    await until('watch open', () => srv.app.openWatches() === 1);
    const before = retries().length;
    relay.setTarget(undefined);
    await srv.stop();
    await until('informer backing off', () => retries().length > before && clock.pending() === 1);
    srv = await startServer({ dataDir, ...(store ? { store } : {}) });
  };
  await restart();
  for (let i = 0; i < 4; i++) {
    const count = retries().length;
    const delay = retries().at(-1)?.fields?.retryInMs as number;
    clock.advance(delay - 1);
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(retries().length, count, `no retry before ${delay} ms`);
    clock.advance(1);
    await until(`retry after ${delay} ms`, () => retries().length === count + 1 && clock.pending() === 1);
    assert.equal(retries().at(-1)?.fields?.retryInMs, Math.min(2 * delay, 1000), 'the delay doubled, up to the cap');
  }
  assert.ok(
    logger.lines.some(
      (l) => l.msg === 'List or watch failed' && (l.fields?.error as Error).message.includes('unreachable'),
    ),
  );

  // Up again with the same data: changes made meanwhile are still in the event log, so the watch resumes.
  relay.setTarget(portOf(srv));
  await must(srv, 'POST', '/nodes', node('d'));
  clock.advance(1000);
  await until('d cached after resume', () => inf.get('d') !== undefined);
  assert.equal(
    logger.lines.some((l) => l.msg === 'Watch expired, relisting'),
    false,
    'resumed without a relist',
  );

  // Down, and back with an event log of 3 that overflows before the informer retries: 410, relist, diff.
  rec.events.length = 0;
  await restart({ eventLogCapacity: 3 });
  relay.setTarget(portOf(srv));
  await must(srv, 'DELETE', '/nodes/a');
  await must(srv, 'PATCH', '/nodes/b', { spec: { site: 'away' } }, MERGE);
  for (const n of ['e', 'f', 'g']) await must(srv, 'POST', '/nodes', node(n));
  clock.advance(1000);
  await until(
    'cache converged',
    () => names(inf).join() === 'b,c,d,e,f,g',
    5000,
    () => ({ cached: names(inf), events: rec.events, log: logger.lines.slice(-5), pending: clock.pending() }),
  );
  assert.ok(
    logger.lines.some((l) => l.msg === 'Watch expired, relisting'),
    'the 410 was seen',
  );
  assert.deepEqual(rec.events.sort(), ['ADDED e', 'ADDED f', 'ADDED g', 'DELETED a', 'MODIFIED b']);
  assert.equal((inf.get('b')?.spec as { site: string }).site, 'away');

  await must(srv, 'POST', '/nodes', node('h'));
  await until('h cached', () => inf.get('h') !== undefined);
  await inf.stop();
  await srv.stop();
});

test('a controller reconciles every key, maps secondary objects to keys, and retries failures with backoff', async () => {
  const srv = await startServer();
  cleanups.push(() => srv.stop());
  for (const n of ['n1', 'n2', 'flaky']) await must(srv, 'POST', '/nodes', node(n));
  const client = createClient(srv.config);
  cleanups.push(() => client.close());
  const logger = memoryLogger();
  const manager = createManager({ client, logger });
  const nodes = manager.informerFor('nodes');
  const calls: Array<{ key: string; at: number }> = [];
  let flakyFailures = 2;
  const reconciler: Reconciler = {
    async reconcile(key) {
      calls.push({ key, at: Date.now() });
      if (key === 'flaky' && flakyFailures-- > 0) throw new Error('not ready yet');
      const obj = nodes.get(key);
      if (!obj) return; // deleted: nothing left to converge
      const status = (obj.status ?? {}) as { observedGeneration?: number };
      if (status.observedGeneration === obj.metadata.generation) return;
      await client.updateStatus<string>('nodes', {
        ...obj,
        status: { ...status, observedGeneration: obj.metadata.generation },
      });
    },
  };
  const queue = new WorkQueue({ baseDelayMs: 40 });
  const controller = createController({
    name: 'node-test',
    reconciler,
    queue,
    logger,
    workers: 2,
    sources: [
      { informer: nodes },
      { informer: manager.informerFor('events'), keys: (e) => [(e.involvedObject as { name: string }).name] },
    ],
  });
  manager.add(controller);
  assert.equal(await manager.start(), true);
  cleanups.push(() => manager.stop());

  const observed = async (name: string): Promise<boolean> =>
    (await client.get('nodes', name)).status?.observedGeneration === 1;
  await until('every node reconciled', () => ['n1', 'n2', 'flaky'].every((n) => nodes.get(n)?.status !== undefined));
  for (const n of ['n1', 'n2', 'flaky']) assert.equal(await observed(n), true);

  const flaky = calls.filter((c) => c.key === 'flaky').map((c) => c.at);
  assert.ok(flaky.length >= 3, `flaky was retried: ${flaky.length} calls`);
  assert.ok(flaky[1] - flaky[0] >= 35, `first retry after ~40 ms, got ${flaky[1] - flaky[0]}`);
  assert.ok(flaky[2] - flaky[1] >= 75, `second retry after ~80 ms, got ${flaky[2] - flaky[1]}`);
  assert.equal(queue.numRequeues('flaky'), 0, 'success forgot the failures');
  assert.equal(logger.lines.filter((l) => l.msg === 'Reconcile failed, will retry').length, 2);

  await must(srv, 'POST', '/nodes', node('n3'));
  await until('n3 reconciled', () => nodes.get('n3')?.status !== undefined);
  const before = calls.filter((c) => c.key === 'n1').length;
  await must(srv, 'POST', '/events', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Event',
    metadata: { name: 'n1.test' },
    involvedObject: { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', name: 'n1' },
    type: 'Normal',
    reason: 'Tested',
  });
  await until('an Event enqueued its node', () => calls.filter((c) => c.key === 'n1').length > before);
  await must(srv, 'DELETE', '/nodes/n2');
  const n2calls = calls.filter((c) => c.key === 'n2').length;
  await until('deleting enqueued the key', () => calls.filter((c) => c.key === 'n2').length > n2calls);
  await manager.stop();
});
